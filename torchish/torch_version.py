"""`torch.torch_version.TorchVersion`: `torch.__version__` is a str that compares as a version,
so `torch.__version__ >= "2.0"` and `torch.__version__ < (2, 2)` mean what they say (a tuple
is read as its release numbers)."""
import re

__all__ = ["TorchVersion"]

try:
    from packaging.version import InvalidVersion, Version
except ImportError:  # without packaging: release numbers only ("2.13.0+x" -> (2, 13, 0))
    InvalidVersion = ValueError

    class Version(tuple):
        def __new__(cls, text):
            found = re.match(r"v?(\d+(?:\.\d+)*)", text.strip())
            if found is None:
                raise ValueError(f"Invalid version: '{text}'")
            parts = [int(p) for p in found.group(1).split(".")]
            return super().__new__(cls, parts + [0] * (6 - len(parts)))


def _version(value):
    if isinstance(value, (tuple, list)):
        value = ".".join(str(v) for v in value)
    if not isinstance(value, str):
        raise TypeError(f"can't compare a version with {type(value).__name__}")
    return Version(value)


class TorchVersion(str):
    def _compare(self, other, method):
        try:
            theirs = _version(other)
        except (TypeError, InvalidVersion):
            raise InvalidVersion(f"Invalid version: '{other}'") from None
        return getattr(_version(str(self)), method)(theirs)

    def __eq__(self, other):
        try:
            return self._compare(other, "__eq__")
        except InvalidVersion:
            return NotImplemented if not isinstance(other, str) else str.__eq__(self, other)

    def __ne__(self, other):
        same = self.__eq__(other)
        return same if same is NotImplemented else not same

    def __lt__(self, other):
        return self._compare(other, "__lt__")

    def __le__(self, other):
        return self._compare(other, "__le__")

    def __gt__(self, other):
        return self._compare(other, "__gt__")

    def __ge__(self, other):
        return self._compare(other, "__ge__")

    __hash__ = str.__hash__
