"""Does not import (a syntax error): must be COMPILE_ERROR while the run goes on."""
import torch

class SiluAndMul(torch.nn.Module)
    pass
