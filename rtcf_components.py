"""The bundled component packages, importable from anywhere as ``rtcf_components.<name>``.

The packages stay in the checkout's ``components/`` folder; this module makes that folder the
package ``rtcf_components`` (its ``__path__``), so ``from rtcf_components.kinematics import
load_model`` names one module whatever folder a script runs from: a user's own ``kinematics``
package or module beside the script neither hides the bundled one nor is hidden by it. The
installed rtcf (scripts/run and scripts/test install it from the checkout) puts the checkout on
sys.path, which is where this module is found.

Compositions and rtc.conf keep the short names (``module: kinematics``): the manager resolves
the name of a bundled package to this namespace.
"""

from pathlib import Path as _Path

#: the folder that holds the bundled component packages
FOLDER = _Path(__file__).resolve().parent / "components"

__path__ = [str(FOLDER)]


def names() -> list[str]:
    """The bundled packages' short names (``kinematics``, ``dcm``, ...), sorted."""
    return sorted(p.name for p in FOLDER.iterdir()
                  if (p / "__init__.py").is_file() and p.name.isidentifier())
