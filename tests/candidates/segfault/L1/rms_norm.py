"""Kills its own process with a segmentation fault, as a kernel library's bad pointer would: must be RUNTIME_ERROR
naming SIGSEGV. (Through faulthandler's test hook: a raw read at address 0 through ctypes is refused by the audit
guard before it can crash.)"""
import faulthandler

import torch


class RMSNorm(torch.nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden_size))

    def forward(self, x, residual=None):
        faulthandler._sigsegv()
