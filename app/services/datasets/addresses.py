"""Which addresses a fetch may connect to: every resolved address checked before connecting.

A URL named by a caller is fetched by the service, from inside the operator's network, so
without a fence it reaches what the caller cannot: the loopback interface (the service
itself, its metrics, other local daemons), the cloud metadata address (169.254.169.254),
private networks. :class:`AddressPolicy` resolves a host name itself and refuses it
(:class:`~app.errors.Forbidden`, before any connection) if ANY of its addresses is:

* loopback, link-local (169.254/16, fe80::/10), private (10/8, 172.16/12, 192.168/16,
  fc00::/7), unspecified, multicast, reserved, or otherwise not globally routable
  (100.64/10, 192.0.0/24, documentation and benchmark ranges, ...);
* such an address in IPv6 clothing: IPv4-mapped (``::ffff:127.0.0.1``), 6to4
  (``2002::/16``), Teredo, NAT64 (``64:ff9b::/96``);
* an address of this machine (one a socket can be bound to, or the service's own
  ``COSTWISE_HOST``): the service's own listening address whatever the interface;

unless the operator's allow-list (``COSTWISE_DATA_ALLOW_HOSTS``) names the host name or a
network (CIDR) holding the address. The caller connects to the addresses returned by
:meth:`AddressPolicy.checked_addresses`, never resolving the name again, so DNS answers
that change between the check and the connection (rebinding) cannot bypass it.

Classification uses :mod:`ipaddress` from the standard library only.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass

from app.errors import Forbidden, InvalidArgument

__all__ = ["ALLOW_SETTING", "AddressPolicy", "IPAddress", "refusal_reason"]

ALLOW_SETTING = "COSTWISE_DATA_ALLOW_HOSTS"
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped, 6to4, Teredo, NAT64)."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def refusal_reason(ip: IPAddress) -> str | None:
    """What kind of address ``ip`` is when a fetch must not reach it (``loopback``,
    ``link-local``, ...), or None for a public address."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded_ipv4(ip)
        if inner is not None:
            reason = refusal_reason(inner)
            return None if reason is None else f"{reason}, in IPv6 form,"
    checks = (
        ("unspecified", ip.is_unspecified),
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("reserved", ip.is_reserved),
        ("private", ip.is_private),
        ("not a public address", not ip.is_global),
    )
    for name, hit in checks:
        if hit:
            return name
    return None


def _is_own_address(ip: IPAddress) -> bool:
    """Whether ``ip`` is an address of this machine: binding a socket to it succeeds
    (a datagram socket, port 0: nothing is sent, nothing listens)."""
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.bind((str(ip), 0))
    except OSError:
        return False
    return True


@dataclass(frozen=True)
class AddressPolicy:
    """The operator's allow-list and the service's own address; checks hosts and addresses.

    Parameters
    ----------
    allow_hosts : tuple of str
        Host names (exact, case-insensitive) whose addresses are not classified.
    allow_networks : tuple of ip networks
        Networks (a single address is a /32 or /128) whose addresses are allowed.
    own_hosts : tuple of str
        The service's configured listening host (``COSTWISE_HOST``), refused like an
        address of this machine.
    setting : str
        The setting that allows hosts, named in a refusal (data references:
        ``COSTWISE_DATA_ALLOW_HOSTS``; webhooks: ``COSTWISE_WEBHOOK_ALLOW_HOSTS``).
    """

    allow_hosts: tuple[str, ...] = ()
    allow_networks: tuple[IPNetwork, ...] = ()
    own_hosts: tuple[str, ...] = ()
    setting: str = ALLOW_SETTING  # the allow-list a refusal names

    @classmethod
    def from_entries(
        cls, entries: Iterable[str], own_hosts: Iterable[str] = (), setting: str = ALLOW_SETTING
    ) -> AddressPolicy:
        """Build from ``COSTWISE_DATA_ALLOW_HOSTS`` entries: a CIDR or an IP address is a
        network, anything else a host name. Raises ValueError for an empty entry."""
        names: list[str] = []
        networks: list[IPNetwork] = []
        for raw in entries:
            entry = raw.strip().lower().strip("[]")
            if not entry:
                raise ValueError("an empty entry")
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                if "/" in entry:
                    raise ValueError(f"{raw!r} is not a network (CIDR) or host name") from None
                names.append(entry.rstrip("."))
        own = tuple(h.strip("[]") for h in own_hosts if h)
        return cls(tuple(names), tuple(networks), own, setting)

    def _allowed(self, host: str, ip: IPAddress) -> bool:
        return host in self.allow_hosts or any(ip in net for net in self.allow_networks)

    def _own(self, ip: IPAddress) -> bool:
        for h in self.own_hosts:
            try:
                if ipaddress.ip_address(h) == ip:
                    return True
            except ValueError:
                continue
        return _is_own_address(ip)

    def refusal(self, host: str, ip: IPAddress) -> str | None:
        """Why ``ip`` (an address of ``host``) may not be reached, or None."""
        if self._allowed(host.lower().rstrip("."), ip):
            return None
        reason = refusal_reason(ip)
        if reason is None and self._own(ip):
            reason = "an address of this machine"
        return reason

    def checked_addresses(
        self, host: str, port: int, *, field: str, uri: str, hop: int = 0
    ) -> list[IPAddress]:
        """Every address of ``host`` (resolved here, once), if none is refused.

        Raises Forbidden naming the kind of address (and, for the host the caller named,
        the address) when any is refused, InvalidArgument when the name does not resolve.
        Nothing is connected to here.
        """
        name = host.strip("[]").lower()
        try:
            literal: IPAddress | None = ipaddress.ip_address(name.split("%", 1)[0])
        except ValueError:
            literal = None
        if literal is not None:
            addresses: list[IPAddress] = [literal]
        else:
            try:
                infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
            except (OSError, UnicodeError):
                raise InvalidArgument(
                    f"{field}: could not read {uri!r}: the host name does not resolve",
                    field=field,
                ) from None
            addresses = list(
                dict.fromkeys(ipaddress.ip_address(str(i[4][0]).split("%", 1)[0]) for i in infos)
            )
        for ip in addresses:
            reason = self.refusal(name, ip)
            if reason is None:
                continue
            where = (
                f"{reason} ({ip}) is not allowed"
                if hop == 0
                else f"a redirect led to an address that is not allowed ({reason})"
            )
            raise Forbidden(
                f"{field}: address refused: {where}; nothing was sent to it (an operator "
                f"allows hosts or networks with {self.setting})",
                field=field,
            )
        if not addresses:
            raise InvalidArgument(
                f"{field}: could not read {uri!r}: the host name does not resolve", field=field
            )
        return addresses
