"""Parameter sources below the composition: what rtc.conf says about a component's parameters.

In the order they are applied (a later source wins):

1. the component conf files rtc.conf names (``<category>.<type|instance>.config_file``);
2. rtc.conf's own ``<category>.<type>.conf.<set>.<param>`` keys, then the instance's
   (``<category>.<instance>.conf...``), and ``...configuration.active_config``.

The composition's ``params`` come after all of them (the manager loads those). Each error
names the file, or the rtc.conf key and where it was set.
"""

from __future__ import annotations

from typing import Mapping

from . import rtcconf
from .component import Component
from .errors import ConfigError, RtcfError
from .params import ParamStore


def apply_conf_sources(conf: Mapping[str, str], store: ParamStore, cls: type[Component],
                       instance: str) -> None:
    """Load every rtc.conf source of ``cls`` / ``instance`` into ``store``; raise ConfigError
    naming the source of the first bad value. Runs in: the main thread."""
    sources = [rtcconf.load_component_conf(path) for path in
               rtcconf.component_conf_files(conf, cls.category, cls.type_name, instance)]
    for name in (cls.type_name, instance):
        prefix = f"{cls.category}.{name}."
        keys = {k[len(prefix):]: v for k, v in conf.items()
                if k.startswith(prefix + "conf.") or
                k == prefix + "configuration.active_config"}
        for key in list(keys):      # check each key alone, to name where it came from
            try:
                cc = rtcconf.component_conf_from({key: keys[key]}, "rtc.conf")
                for set_name, values in cc.sets.items():
                    ParamStore(store.specs, store.owner).load(values, set_name)
            except RtcfError as e:
                raise ConfigError(f"{rtcconf.where(conf, prefix + key)}: "
                                  f"{prefix + key}: {e}") from None
        if keys:
            sources.append(rtcconf.component_conf_from(keys, f"rtc.conf ({prefix}*)"))
    for cc in sources:
        try:
            for set_name, values in cc.sets.items():
                store.load(values, set_name)
            if cc.active_set:
                store.select_initial(cc.active_set)
        except RtcfError as e:
            raise ConfigError(f"{cc.source}: {e}") from None
