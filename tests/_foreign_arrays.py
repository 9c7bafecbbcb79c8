"""Stand-ins for other libraries' device arrays, which reach gpuboost through a protocol
alone: tests of device-resident input (gpuboost.data.device) wrap a CuPy array or an
emulated device array in them."""


class ArrayInterfaceOnly:
    """A foreign device array exporting only ``__cuda_array_interface__`` (as Numba's)."""

    def __init__(self, array):
        self._array = array

    @property
    def __cuda_array_interface__(self):
        return self._array.__cuda_array_interface__


class DLPackOnly:
    """A foreign device tensor exporting only DLPack (as PyTorch's)."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()
