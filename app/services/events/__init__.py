"""Events for operators: webhooks registered by an admin, the deliverer that POSTs each
event to them, signed, retried and logged (:mod:`~app.services.events.webhooks`), and the
watch that raises the events of a model's condition -- a calibration alarm, a cost ratio
out of its band, a challenger proven cheaper -- once when it starts to hold
(:mod:`~app.services.events.watch`).

It may import the datasets room (the address fence every outgoing connection goes
through), the feedback loop's monitoring and the challenger room's comparison (what the
watch judges), and the registry; nothing imports it but the API.
"""
