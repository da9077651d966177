"""`torchish.nn.init`: parameter initialisation drawing exactly what PyTorch draws."""
