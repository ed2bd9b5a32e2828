//! Which addresses `scrape_webpage` may connect to: the SSRF defence.
//!
//! A page the model asks for is fetched from inside the worker, which sits on
//! the operator's network. Without a filter the model (or a page it was told
//! to read) could reach loopback services, the LAN or a cloud metadata
//! endpoint. So every host is resolved here, every resolved address is
//! checked, and the connection is pinned to the address that passed (see
//! `fetch.rs`), on the first hop and on every redirect.
//!
//! IPv6 addresses that embed or map an IPv4 address (IPv4-mapped and
//! -translated, IPv4-compatible, 6to4, NAT64, Teredo) reach that IPv4 host
//! wherever a translator or tunnel exists, so they are judged by the IPv4
//! address inside them.
//!
//! This module only decides; it never connects. The search backend's URL is
//! operator configuration and does not pass through here (`search.rs`
//! follows no redirect off the backend's origin instead).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Where web tools may connect.
///
/// Built from [`subagent_protocol::WebSettings::allow_private_networks`]; the
/// socket allowlist exists for tests only, which need one loopback server to
/// count as public while every other non-public address stays refused (a
/// redirect from that server to `127.0.0.1:other` must still be refused). No
/// setting or wire field fills it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    allow_private_networks: bool,
    allowed_sockets: Vec<SocketAddr>,
}

impl AddressPolicy {
    /// The default policy: public addresses only.
    pub fn public_only() -> Self {
        Self::default()
    }

    /// A policy that lets everything through when `allow` is true (the
    /// operator's explicit `allow_private_networks`).
    pub fn allowing_private_networks(allow: bool) -> Self {
        Self {
            allow_private_networks: allow,
            allowed_sockets: Vec::new(),
        }
    }

    /// Lets exactly `socket` (address and port) through although its address
    /// is not public. For tests that serve pages from loopback.
    pub fn allow_socket(mut self, socket: SocketAddr) -> Self {
        self.allowed_sockets.push(socket);
        self
    }

    /// True when the filter is off.
    pub fn allows_private_networks(&self) -> bool {
        self.allow_private_networks
    }

    /// Checks one resolved socket address.
    pub fn check(&self, socket: SocketAddr) -> Result<(), RefusedAddress> {
        if self.allow_private_networks || self.allowed_sockets.contains(&socket) {
            return Ok(());
        }
        match non_public_reason(socket.ip()) {
            None => Ok(()),
            Some(reason) => Err(RefusedAddress {
                address: socket.ip(),
                reason,
            }),
        }
    }
}

/// A resolved address the policy refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "refusing to connect to {address} ({reason}): web tools fetch public addresses only \
     (the operator can allow private networks with `[web] allow_private_networks = true` \
     or `subagent run --allow-private-networks`)"
)]
pub struct RefusedAddress {
    /// The address.
    pub address: IpAddr,
    /// Which non-public range it is in.
    pub reason: &'static str,
}

/// Why `ip` is not a public address, or `None` when it is.
pub fn non_public_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_reason(v4),
        IpAddr::V6(v6) => v6_reason(v6),
    }
}

fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    // Metadata first: it is also link-local, but the specific name says more.
    if ip == Ipv4Addr::new(169, 254, 169, 254) {
        return Some("cloud metadata endpoint");
    }
    let reason = match (a, b, c) {
        _ if ip.is_unspecified() => "unspecified",
        (0, _, _) => "\"this network\" (0.0.0.0/8)",
        (127, _, _) => "loopback",
        (10, _, _) => "private network (10.0.0.0/8)",
        (172, 16..=31, _) => "private network (172.16.0.0/12)",
        (192, 168, _) => "private network (192.168.0.0/16)",
        (169, 254, _) => "link-local",
        (100, 64..=127, _) => "carrier-grade NAT (100.64.0.0/10)",
        (192, 0, 0) => "IETF protocol assignments (192.0.0.0/24)",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "documentation range",
        (198, 18..=19, _) => "benchmarking range (198.18.0.0/15)",
        (224..=239, _, _) => "multicast",
        _ if ip.is_broadcast() => "broadcast",
        (240..=255, _, _) => "reserved (240.0.0.0/4)",
        _ => return None,
    };
    Some(reason)
}

fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if ip.is_loopback() {
        return Some("loopback");
    }
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        return Some("cloud metadata endpoint");
    }
    // Ranges that embed or map an IPv4 address reach that IPv4 host
    // wherever a translator or tunnel exists, so they are judged as it.
    if let Some(reason) = embedded_v4_reason(ip) {
        return reason;
    }
    let segments = ip.segments();
    let reason = match segments[0] {
        s if s & 0xfe00 == 0xfc00 => "unique-local (fc00::/7)",
        s if s & 0xffc0 == 0xfe80 => "link-local (fe80::/10)",
        s if s & 0xffc0 == 0xfec0 => "site-local (fec0::/10)",
        s if s & 0xff00 == 0xff00 => "multicast",
        0x0100 if segments[1..4].iter().all(|s| *s == 0) => "discard-only (100::/64)",
        0x2001 if segments[1] == 0x0db8 => "documentation range (2001:db8::/32)",
        0x2001 if segments[1] == 0x0002 && segments[2] == 0 => "benchmarking range (2001:2::/48)",
        s if s & 0xfff0 == 0x3ff0 => "documentation range (3fff::/20)",
        _ => return None,
    };
    Some(reason)
}

/// Where the IPv4 address sits in a NAT64 address under each prefix length
/// the local-use /48 may be cut to (48, 56, 64, 96; RFC 6052 section 2.2,
/// which skips octet 8), and the first octet of the zero suffix after it.
const NAT64_FORMS: [([usize; 4], usize); 4] = [
    ([6, 7, 9, 10], 11),
    ([7, 9, 10, 11], 12),
    ([9, 10, 11, 12], 13),
    ([12, 13, 14, 15], 16),
];

/// A local-use NAT64 address: the operator picks the prefix length, which
/// moves the IPv4 address, and the address alone does not say which. The
/// true length is one whose form the address fits (octet 8 zero, zeros
/// after the IPv4 address), so every fitting form must hold a public
/// address: in practice the /96 form of a public IPv4 address passes.
fn nat64_local_use_reason(o: [u8; 16]) -> Option<&'static str> {
    if o[8] != 0 {
        return Some("NAT64 local-use address with a nonzero u octet (64:ff9b:1::/48)");
    }
    NAT64_FORMS
        .iter()
        .filter(|(_, suffix)| o[*suffix..].iter().all(|b| *b == 0))
        .find_map(|([a, b, c, d], _)| v4_reason(Ipv4Addr::new(o[*a], o[*b], o[*c], o[*d])))
}

/// For an address in a range that embeds an IPv4 address: `Some` of the
/// verdict on it (`Some(None)`: the embedded host is public). `None` when
/// `ip` embeds no IPv4 address.
fn embedded_v4_reason(ip: Ipv6Addr) -> Option<Option<&'static str>> {
    let o = ip.octets();
    let s = ip.segments();
    let v4 = |a: usize, b: usize, c: usize, d: usize| Ipv4Addr::new(o[a], o[b], o[c], o[d]);
    let low32 = v4(12, 13, 14, 15);
    let verdict = match s {
        // ::ffff:0:0/96, IPv4-mapped.
        [0, 0, 0, 0, 0, 0xffff, _, _] => v4_reason(low32),
        // ::ffff:0:0:0/96, IPv4-translated (SIIT, RFC 6145).
        [0, 0, 0, 0, 0xffff, 0, _, _] => v4_reason(low32),
        // ::/96, IPv4-compatible (deprecated by RFC 4291): no public use.
        [0, 0, 0, 0, 0, 0, _, _] => v4_reason(low32).or(Some("IPv4-compatible address (::/96)")),
        // 64:ff9b::/96, NAT64 well-known prefix (RFC 6052).
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => v4_reason(low32),
        // 64:ff9b:1::/48, NAT64 local-use prefix (RFC 8215).
        [0x64, 0xff9b, 1, ..] => nat64_local_use_reason(o),
        // 2002::/16, 6to4: the IPv4 address of the tunnel end in bits 16..48.
        [0x2002, ..] => v4_reason(v4(2, 3, 4, 5)),
        // 2001::/32, Teredo: the server's IPv4 in bits 32..64, the
        // client's in the last 32 bits, inverted (RFC 4380).
        [0x2001, 0, ..] => {
            let client = Ipv4Addr::from(!u32::from(low32));
            v4_reason(v4(4, 5, 6, 7)).or_else(|| v4_reason(client))
        }
        _ => return None,
    };
    Some(verdict)
}

#[cfg(test)]
#[path = "ssrf_tests.rs"]
mod tests;
