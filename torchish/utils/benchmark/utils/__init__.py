"""The modules of `torchish.utils.benchmark`, at PyTorch's paths."""
