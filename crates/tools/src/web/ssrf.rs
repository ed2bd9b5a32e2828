//! Which addresses `scrape_webpage` may connect to: the SSRF defence.
//!
//! A page the model asks for is fetched from inside the worker, which sits on
//! the operator's network. Without a filter the model (or a page it was told
//! to read) could reach loopback services, the LAN or a cloud metadata
//! endpoint. So every host is resolved here, every resolved address is
//! checked, and the connection is pinned to the address that passed (see
//! `fetch.rs`), on the first hop and on every redirect.
//!
//! This module only decides; it never connects. The search backend's URL is
//! operator configuration and does not pass through here.

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
    // An IPv4-mapped (::ffff:a.b.c.d) or IPv4-compatible address reaches
    // the IPv4 host, so it is judged as that host.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return v4_reason(v4);
    }
    let segments = ip.segments();
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        return Some("cloud metadata endpoint");
    }
    let reason = match segments[0] {
        _ if ip.is_unspecified() => "unspecified",
        _ if ip.is_loopback() => "loopback",
        // ::/96, deprecated IPv4-compatible addresses: judged as their IPv4 host.
        0 if segments[1..6].iter().all(|s| *s == 0) => {
            let [_, _, _, _, _, _, hi, lo] = segments;
            let v4 = Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
            return v4_reason(v4).or(Some("IPv4-compatible address"));
        }
        // 64:ff9b::/96 NAT64 embeds an IPv4 host as well.
        0x64 if segments[1] == 0xff9b && segments[2..6].iter().all(|s| *s == 0) => {
            let [_, _, _, _, _, _, hi, lo] = segments;
            let v4 = Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
            return v4_reason(v4);
        }
        s if s & 0xfe00 == 0xfc00 => "unique-local (fc00::/7)",
        s if s & 0xffc0 == 0xfe80 => "link-local (fe80::/10)",
        s if s & 0xffc0 == 0xfec0 => "site-local (fec0::/10)",
        s if s & 0xff00 == 0xff00 => "multicast",
        0x2001 if segments[1] == 0x0db8 => "documentation range (2001:db8::/32)",
        _ => return None,
    };
    Some(reason)
}

#[cfg(test)]
#[path = "ssrf_tests.rs"]
mod tests;
