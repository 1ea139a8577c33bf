"""Reverse-mode automatic differentiation (``lucid.autograd``)."""
from .engine import backward, grad, run_backward
from .function import Function, FunctionCtx, Node
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                        set_grad_enabled)
from .hooks import detect_anomaly, is_anomaly_enabled, register_hook, set_detect_anomaly
from .gradcheck import gradcheck, gradgradcheck


__all__ = ["Function", "FunctionCtx", "Node", "backward", "grad", "gradcheck", "gradgradcheck", "no_grad", "enable_grad",
           "is_grad_enabled", "set_grad_enabled", "inference_mode", "is_inference_mode_enabled", "detect_anomaly",
           "set_detect_anomaly", "is_anomaly_enabled"]
