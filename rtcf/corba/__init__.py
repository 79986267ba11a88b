"""The CORBA layer of rtcf: the only package that imports omniORB.

Submodules: ``idl`` (stub build), ``orb`` (ORB setup), ``naming`` (CosNaming client and a
private omniNames), ``cdr`` (bare CDR codecs for data-port payloads, no ORB needed).
"""
