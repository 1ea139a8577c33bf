"""Dynamically quantized layers (float in, float out); see linear.py and rnn.py."""
from .linear import Float16Linear, Linear, WeightOnlyInt4Linear  # noqa: F401
from .rnn import GRU, LSTM  # noqa: F401

__all__ = ["Linear", "Float16Linear", "WeightOnlyInt4Linear", "LSTM", "GRU"]
