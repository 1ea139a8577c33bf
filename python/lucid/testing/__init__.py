"""Cross-stream parity testing, public so users can check their own hosts.

* ``lucid.testing.adversarial``: generators of inputs that expose kernels
  which stray from NUMERICS.md (exact ties, division traps, grid edges,
  specials, seeded random data).
* ``assert_streams_identical(fn, *args)``: runs ``fn`` on the CPU and the GPU
  stream and requires byte-identical outputs; ``compare_streams`` returns the
  comparison (with timings) instead of raising.
* ``assert_close(actual, expected)``: PyTorch's ``torch.testing.assert_close``
  (tolerances by dtype, a message counting mismatched elements).
* ``python -m lucid.parity``: runs every quantization primitive over the
  battery on both streams and prints a table and a fingerprint.
* ``lucid.testing.fuzz``: random configurations of every primitive, compared
  three ways (CPU stream, GPU stream, ``lucid.testing.reference``, a numpy
  transcription of docs/numerics.md); ``python -m lucid.parity --fuzz N``.

>>> from lucid.testing import adversarial
>>> adversarial.grid("qint8")
(-128, 127)
"""
from . import adversarial
from .comparison import assert_close
from .streams import StreamComparison, assert_streams_identical, compare_streams

__all__ = ["adversarial", "assert_close", "assert_streams_identical", "compare_streams", "StreamComparison"]
