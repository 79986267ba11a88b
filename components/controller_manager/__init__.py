"""ControllerManager component: pr2-style real-time controllers (spec section 5).

The core is rtcf.controller (pure); here: the RTC shell (component.py), the
RTController::ControllerManagerService servant (service.py), the hardware bindings
(hardware.py: the DCM in process, or DCM ports) and the bundled controllers
(controllers.py), plus a client (proxy.py).
"""
