"""Checked mode's check of texture objects: a kernel that writes the memory a texture object it
was passed reads, in the same launch, is a TextureWriteError. The Programming Guide leaves what
such a texture then reads undefined (the texture cache is not kept coherent with the launch's
global writes), so a GPU may give the old texels, the new ones or a mix.

A fetch itself needs no check: its addressing modes keep it inside the texture by construction,
and it only reads. The check compares the texels' bytes before and after the launch, so a write
of the value a texel already holds is not seen (harmless, as it changes nothing), nor is which
thread and line wrote: the error names the kernel, the texture parameter and the first texel
that changed.
"""
import ctypes

from ..errors import TextureWriteError
from .abi import TEXTURE_MAGIC, CpuTexture


def texel_span(handle):
    """(address, bytes) of the texels of the kc::CpuTexture at `handle` (a whole program's
    cudaTextureObject_t), or None for a handle that is not a live texture object."""
    if not handle:
        return None
    t = CpuTexture.from_address(handle)
    if t.magic != TEXTURE_MAGIC:
        return None
    texel = t.channels * t.channel_bits // 8
    return t.data, (t.depth - 1) * t.slice_pitch + (t.height - 1) * t.pitch + t.width * texel


class Watch:
    """The texels of a launch's texture objects, taken before it runs: spans is a list of
    (parameter name, address, bytes)."""

    def __init__(self, kernel_name, spans):
        self.kernel_name = kernel_name
        self.before = [(name, address, ctypes.string_at(address, n)) for name, address, n in spans]

    def check(self):
        """Raise TextureWriteError for the first texture whose texels the launch changed."""
        for name, address, old in self.before:
            new = ctypes.string_at(address, len(old))
            if new != old:
                at = next(i for i, (a, b) in enumerate(zip(old, new)) if a != b)
                raise TextureWriteError(
                    f"kernel `{self.kernel_name}` wrote the memory that its texture object `{name}` reads, in the "
                    f"same launch (byte {at} of the texels changed). The CUDA Programming Guide leaves such a fetch "
                    "undefined: the texture cache is not kept coherent with the launch's writes, so a GPU may read "
                    "old texels, new ones or a mix. Write the results to other memory (and make a texture of it for "
                    "the next launch), or read the data through a pointer instead of the texture.",
                    kernel=self.kernel_name, array=name)
