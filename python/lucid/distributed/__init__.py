"""``lucid.distributed``: torch.distributed's process group and collectives on MLX's
distributed layer (ring over TCP, MPI, NCCL on CUDA, JACCL between Macs).

Launch the ranks with ``mlx.launch -n 2 script.py`` (or ``mpirun``); each calls
``init_process_group()``. docs/distributed.md has the launcher story.
"""
from .process_group import (  # noqa: F401
    BACKENDS, destroy_process_group, get_backend, get_rank, get_world_size, init_process_group,
    is_available, is_backend_available, is_initialized, new_group,
)
from .collectives import (  # noqa: F401
    ReduceOp, Work, all_gather, all_gather_into_tensor, all_gather_object, all_reduce, barrier, broadcast,
    broadcast_object_list, recv, reduce_scatter, reduce_scatter_tensor, send, from_mlx, to_mlx,
)
from .checkpoint import load_checkpoint, save_checkpoint  # noqa: F401
