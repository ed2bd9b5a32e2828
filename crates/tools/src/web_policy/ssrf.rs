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
//! The ranges are the one table tool processes' network namespace refuses
//! too ([`subagent_sandbox::net::ranges`]); this module only adds the
//! unwrapping of embedded IPv4 addresses.
//!
//! This module only decides; it never connects. The search backend's URL is
//! operator configuration and does not pass through here (`search.rs`
//! follows no redirect off the backend's origin instead).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use subagent_sandbox::net::ranges::{self, Opener, Openers, Range};

/// Where web tools may connect.
///
/// Built from [`subagent_protocol::WebSettings`]'s `allow_private_networks`
/// and `allow_link_local_networks`; the
/// socket allowlist exists for tests only, which need one loopback server to
/// count as public while every other non-public address stays refused (a
/// redirect from that server to `127.0.0.1:other` must still be refused). No
/// setting or wire field fills it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    openers: Openers,
    allowed_sockets: Vec<SocketAddr>,
}

impl AddressPolicy {
    /// The default policy: public addresses only.
    pub fn public_only() -> Self {
        Self::default()
    }

    /// A policy that also lets loopback and the private and special ranges
    /// through when `allow` is true (the operator's explicit
    /// `allow_private_networks`); link-local addresses, the cloud metadata
    /// services among them, stay refused either way
    /// ([`subagent_sandbox::net::ranges`] is the table).
    pub fn allowing_private_networks(allow: bool) -> Self {
        Self::opening(Openers {
            private_networks: allow,
            link_local_networks: false,
        })
    }

    /// A policy that lets through the ranges the operator's `openers` open
    /// (link-local ones only with `--allow-link-local-networks`).
    pub fn opening(openers: Openers) -> Self {
        Self {
            openers,
            allowed_sockets: Vec::new(),
        }
    }

    /// Lets exactly `socket` (address and port) through although its address
    /// is not public. For tests that serve pages from loopback.
    pub fn allow_socket(mut self, socket: SocketAddr) -> Self {
        self.allowed_sockets.push(socket);
        self
    }

    /// The ranges the operator opened.
    pub fn openers(&self) -> Openers {
        self.openers
    }

    /// Checks one resolved socket address.
    pub fn check(&self, socket: SocketAddr) -> Result<(), RefusedAddress> {
        if self.allowed_sockets.contains(&socket) {
            return Ok(());
        }
        match non_public_range(socket.ip()) {
            Some(range) if !range.is_open(self.openers) => Err(RefusedAddress {
                address: socket.ip(),
                reason: range.reason,
                opened_by: range.opened_by,
            }),
            _ => Ok(()),
        }
    }
}

/// A resolved address the policy refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "refusing to connect to {address} ({reason}): web tools fetch public addresses only \
     ({})",
    opener_hint(*opened_by)
)]
pub struct RefusedAddress {
    /// The address.
    pub address: IpAddr,
    /// Which non-public range it is in.
    pub reason: &'static str,
    /// The operator's switch that would open it.
    pub opened_by: Opener,
}

fn opener_hint(opener: Opener) -> &'static str {
    match opener {
        Opener::PrivateNetworks => {
            "the operator can open loopback and private networks with `[web] \
             allow_private_networks = true` or `subagent run --allow-private-networks`"
        }
        Opener::LinkLocalNetworks => {
            "the operator can open link-local networks, the cloud metadata services among \
             them, only with `[web] allow_link_local_networks = true` or `subagent run \
             --allow-link-local-networks`; --allow-private-networks does not"
        }
    }
}

/// Why `ip` is not a public address, or `None` when it is.
pub fn non_public_reason(ip: IpAddr) -> Option<&'static str> {
    non_public_range(ip).map(|range| range.reason)
}

/// The refused range `ip` falls in (for an address embedding an IPv4 one,
/// the range of that IPv4 address), or `None` when it is public.
pub fn non_public_range(ip: IpAddr) -> Option<&'static Range> {
    match ip {
        IpAddr::V4(v4) => v4_range(v4),
        IpAddr::V6(v6) => v6_range(v6),
    }
}

fn v4_range(ip: Ipv4Addr) -> Option<&'static Range> {
    ranges::direct_range(IpAddr::V4(ip))
}

fn v6_range(ip: Ipv6Addr) -> Option<&'static Range> {
    // The unspecified and loopback addresses lie in ::/96 too, but are
    // named as themselves.
    let direct = ranges::direct_range(IpAddr::V6(ip));
    if ip.is_unspecified() || ip.is_loopback() {
        return direct;
    }
    // Ranges that embed or map an IPv4 address reach that IPv4 host
    // wherever a translator or tunnel exists, so they are judged as it.
    if let Some(verdict) = embedded_v4_range(ip) {
        return verdict;
    }
    direct
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
fn nat64_local_use_range(o: [u8; 16]) -> Option<&'static Range> {
    if o[8] != 0 {
        return Some(&ranges::NAT64_LOCAL_USE_NONZERO_U);
    }
    NAT64_FORMS
        .iter()
        .filter(|(_, suffix)| o[*suffix..].iter().all(|b| *b == 0))
        .find_map(|([a, b, c, d], _)| v4_range(Ipv4Addr::new(o[*a], o[*b], o[*c], o[*d])))
}

/// For an address in a range that embeds an IPv4 address: `Some` of the
/// verdict on it (`Some(None)`: the embedded host is public). `None` when
/// `ip` embeds no IPv4 address.
fn embedded_v4_range(ip: Ipv6Addr) -> Option<Option<&'static Range>> {
    let o = ip.octets();
    let s = ip.segments();
    let v4 = |a: usize, b: usize, c: usize, d: usize| Ipv4Addr::new(o[a], o[b], o[c], o[d]);
    let low32 = v4(12, 13, 14, 15);
    let verdict = match s {
        // ::ffff:0:0/96, IPv4-mapped.
        [0, 0, 0, 0, 0, 0xffff, _, _] => v4_range(low32),
        // ::ffff:0:0:0/96, IPv4-translated (SIIT, RFC 6145).
        [0, 0, 0, 0, 0xffff, 0, _, _] => v4_range(low32),
        // ::/96, IPv4-compatible (deprecated by RFC 4291): no public use.
        [0, 0, 0, 0, 0, 0, _, _] => v4_range(low32).or_else(|| {
            ranges::IPV6_EMBEDDING_RANGES
                .iter()
                .find(|r| r.prefix == 96 && r.network == IpAddr::V6(Ipv6Addr::UNSPECIFIED))
        }),
        // 64:ff9b::/96, NAT64 well-known prefix (RFC 6052).
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => v4_range(low32),
        // 64:ff9b:1::/48, NAT64 local-use prefix (RFC 8215).
        [0x64, 0xff9b, 1, ..] => nat64_local_use_range(o),
        // 2002::/16, 6to4: the IPv4 address of the tunnel end in bits 16..48.
        [0x2002, ..] => v4_range(v4(2, 3, 4, 5)),
        // 2001::/32, Teredo: the server's IPv4 in bits 32..64, the
        // client's in the last 32 bits, inverted (RFC 4380).
        [0x2001, 0, ..] => {
            let client = Ipv4Addr::from(!u32::from(low32));
            v4_range(v4(4, 5, 6, 7)).or_else(|| v4_range(client))
        }
        _ => return None,
    };
    Some(verdict)
}

#[cfg(test)]
#[path = "ssrf_tests.rs"]
mod tests;
