"""Many machines at once: SSH fan-out, Slurm (srun), and the peer report that names the odd node out."""
