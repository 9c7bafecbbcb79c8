"""Input data: the ``Dataset``, conversion and checks of user inputs, quantile binning,
exclusive feature bundling and the text loaders."""

from .dataset import Dataset
from .io import load_query_file, load_svmlight, read_csv

__all__ = ["Dataset", "load_svmlight", "load_query_file", "read_csv"]
