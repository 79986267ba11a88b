"""Conversions at the CORBA boundary: NVLists, return codes, object identity."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from omniORB import CORBA, any as oany

from ..lifecycle import ReturnCode
from .idl import stub_module

RTC = stub_module("RTC")
SDO = stub_module("SDOPackage")

_RC = {int(rc): getattr(RTC, rc.name) for rc in ReturnCode}
_RC_BACK = {getattr(RTC, rc.name): rc for rc in ReturnCode}


def rc(code: ReturnCode | int) -> Any:
    """Our ReturnCode -> RTC::ReturnCode_t."""
    return _RC[int(code)]


def rc_from(code: Any) -> ReturnCode:
    return _RC_BACK[code]


def to_any(value: Any) -> Any:
    """A Python value (number, bool, string, or a list of those) as a CORBA any."""
    return oany.to_any(value)


def to_nvlist(props: Mapping[str, Any]) -> list:
    """dict -> SDOPackage::NVList; strings as string Anys, object references as object
    Anys, anything else as its string form."""
    out = []
    for k, v in props.items():
        if isinstance(v, CORBA.Object):
            out.append(SDO.NameValue(k, oany.to_any(v)))
        else:
            out.append(SDO.NameValue(k, CORBA.Any(CORBA.TC_string, str(v))))
    return out


def nv_value(value: Any) -> Any:
    try:
        return value.value()
    except Exception:
        return None


def from_nvlist(nvlist: Iterable[Any], strings_only: bool = True) -> dict[str, Any]:
    """SDOPackage::NVList -> dict. With strings_only, non-string values are skipped."""
    out: dict[str, Any] = {}
    for nv in nvlist:
        v = nv_value(nv.value)
        if isinstance(v, str):
            out[nv.name] = v
        elif not strings_only:
            out[nv.name] = v
    return out


def nv_find(nvlist: Iterable[Any], name: str) -> Any:
    for nv in nvlist:
        if nv.name == name:
            return nv_value(nv.value)
    return None


def nv_set(nvlist: list, name: str, value: Any) -> list:
    """Replace or append ``name`` in an NVList (in place; also returned)."""
    new = to_nvlist({name: value})[0]
    for i, nv in enumerate(nvlist):
        if nv.name == name:
            nvlist[i] = new
            return nvlist
    nvlist.append(new)
    return nvlist
