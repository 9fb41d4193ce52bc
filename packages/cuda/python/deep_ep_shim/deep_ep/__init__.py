"""`import deep_ep` as Switchyard: with this folder's parent (deep_ep_shim) on PYTHONPATH, DeepEP's
low-latency API resolves to switchyard_cuda.deep_ep, the same module object (and deep_ep.buffer,
deep_ep.utils (EventOverlap) likewise). See packages/cuda/python/README.md."""

import sys

import switchyard_cuda.deep_ep as _impl
from switchyard_cuda.deep_ep import buffer as _buffer
from switchyard_cuda.deep_ep import events as _events

sys.modules["deep_ep.buffer"] = _buffer
sys.modules["deep_ep.utils"] = _events
sys.modules[__name__] = _impl
