# Makes the etdeploy package importable from any scons (the venv has it installed editable too).
import os
import sys

try:
    _root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
except NameError:   # older SCons exec this file without __file__; scons runs from the top dir
    _root = os.getcwd()
_tools = os.path.join(_root, "tools")
if _tools not in sys.path:
    sys.path.insert(0, _tools)
