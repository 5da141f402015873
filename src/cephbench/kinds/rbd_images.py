"""The RBD kinds' images and their krbd mappings, declared once for the kinds that make them (rbd_bench, fio_rbd,
qemu_rbd: their KIND.resources); drivers/rbd_images.py makes and removes them."""

from __future__ import annotations

from .kind import ResourceType

# "<pool>/<image>", both named cephbench-<run id>-...
RBD_IMAGE = ResourceType("rbd-image", "rbd_images:remove_image", lambda spec: f"rbd rm {spec}",
                         owned_name=lambda spec: spec.rsplit("/", 1)[-1], goes_with_pool=True, order=1)
# the device `rbd map` gave (/dev/rbdN) on this host
RBD_MAPPING = ResourceType("rbd-mapping", "rbd_images:remove_mapping", lambda dev: f"rbd unmap {dev}",
                           maps_image=True, on_cluster=False)
