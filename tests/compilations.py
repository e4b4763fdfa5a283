"""A prologue for a child interpreter's code that counts the kernels numba compiles in it
(into ``compiled``, by qualified name), through numba's compile events."""

COUNT_COMPILATIONS = """
from numba.core import event
compiled = []
class Listener(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Listener())
"""
