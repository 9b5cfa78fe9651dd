# SPDX-License-Identifier: GPL-2.0
"""Compatibility shim: the tracefs helper lives in tools/lib/tracefs.py.

tools/guest-stress.py still imports tracefs from its own directory; this
loads tools/lib/tracefs.py and stands in for it under the same name, so
both see one module. Remove once guest-stress.py puts tools/lib on
sys.path itself.
"""

import importlib.util
import os
import sys

_spec = importlib.util.spec_from_file_location(
    __name__, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'lib', 'tracefs.py'))
_lib = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_lib)
# The import statement returns what sys.modules holds once this file ran.
sys.modules[__name__] = _lib
