"""`torch.utils.data._utils`: the collate helpers' private home, which code imports from."""
from . import collate  # noqa: F401
