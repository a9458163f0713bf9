"""Events for operators: webhooks registered by an admin, and the deliverer that POSTs
each event to them, signed, retried and logged.

It may import the datasets room (the address fence every outgoing connection goes
through) and the registry; nothing imports it but the API.
"""
