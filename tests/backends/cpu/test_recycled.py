"""Recycled buffers (gpuboost.backends.cpu.recycled): a buffer is handed out again only
when no array refers to it, views of views included."""

import numpy as np

from gpuboost.backends.cpu.recycled import KEPT_BUFFERS, recycled_empty


def test_a_buffer_in_use_is_never_handed_out_again():
    first = recycled_empty((3, 4))
    first[:] = 1
    view_of_view = first[1:][:, 2:]  # keeps the buffer in use after `first` is gone
    del first
    second = recycled_empty((3, 4))
    second[:] = 2
    assert (view_of_view == 1).all()
    assert not np.shares_memory(second, view_of_view)


def test_a_free_buffer_is_reused_and_the_kept_ones_are_bounded():
    first = recycled_empty((500, 600), np.int64)  # larger than the other kept buffers
    address = first.__array_interface__["data"][0]
    del first
    again = recycled_empty((400, 600), np.int64)  # fits only in the freed one: reused
    assert again.__array_interface__["data"][0] == address
    assert again.shape == (400, 600) and again.dtype == np.int64
    held = [recycled_empty((7,)) for _ in range(2 * KEPT_BUFFERS)]  # all in use: new ones
    assert len({a.__array_interface__["data"][0] for a in held}) == len(held)


def test_aligned_buffers_start_at_a_multiple_of_the_alignment():
    for size in (5, 37, 4096):
        held = [recycled_empty((size,), np.int64, align=32) for _ in range(3)]
        for array in held:
            assert array.__array_interface__["data"][0] % 32 == 0
            array[:] = 7  # the whole view is inside its buffer
        del held
