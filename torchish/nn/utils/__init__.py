"""`torchish.nn.utils`."""
