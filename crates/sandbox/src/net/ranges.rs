//! The one table of address ranges a tool must not reach on its own:
//! loopback, link-local (every cloud metadata address), private, shared,
//! documentation and other special ranges, with the flag that opens each.
//!
//! Two enforcers read it: `scrape_webpage`'s SSRF guard (which checks each
//! resolved address, and judges an IPv6 address that embeds an IPv4 one by
//! the IPv4 address inside) and the tool processes' private network
//! namespace (which installs one refusing policy-routing rule per range,
//! and refuses the embedding IPv6 ranges whole, since a rule cannot look
//! inside an address). This module only describes; it enforces nothing.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Which operator flag opens a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opener {
    /// `--allow-private-networks` (`[web] allow_private_networks`).
    PrivateNetworks,
    /// `--allow-link-local-networks` (`[web] allow_link_local_networks`):
    /// link-local addresses and the cloud metadata services, whose
    /// credentials a tool could take, stay refused even with private
    /// networks allowed until this separate flag names them.
    LinkLocalNetworks,
}

/// The operator's flags that open ranges of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Openers {
    /// `--allow-private-networks`: loopback, private and special ranges.
    pub private_networks: bool,
    /// `--allow-link-local-networks`: link-local and cloud metadata.
    pub link_local_networks: bool,
}

/// One refused range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// The first address of the range.
    pub network: IpAddr,
    /// Its prefix length.
    pub prefix: u8,
    /// What the range is, for messages.
    pub reason: &'static str,
    /// What opens it.
    pub opened_by: Opener,
}

impl Range {
    /// Whether `ip` lies in the range (an IPv4 range holds no IPv6 address:
    /// callers unwrap embedded IPv4 addresses themselves).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.network, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }

    /// Whether the operator's `openers` open the range.
    pub fn is_open(&self, openers: Openers) -> bool {
        match self.opened_by {
            Opener::PrivateNetworks => openers.private_networks,
            Opener::LinkLocalNetworks => openers.link_local_networks,
        }
    }
}

const fn v4(
    a: u8,
    b: u8,
    c: u8,
    d: u8,
    prefix: u8,
    reason: &'static str,
    opened_by: Opener,
) -> Range {
    Range {
        network: IpAddr::V4(Ipv4Addr::new(a, b, c, d)),
        prefix,
        reason,
        opened_by,
    }
}

const fn v6(segments: [u16; 8], prefix: u8, reason: &'static str, opened_by: Opener) -> Range {
    let [a, b, c, d, e, f, g, h] = segments;
    Range {
        network: IpAddr::V6(Ipv6Addr::new(a, b, c, d, e, f, g, h)),
        prefix,
        reason,
        opened_by,
    }
}

use Opener::{LinkLocalNetworks as LinkLocal, PrivateNetworks as Private};

/// The refused IPv4 ranges. The first that holds an address names it, so a
/// narrower range comes before the wider one around it.
pub const IPV4_RANGES: &[Range] = &[
    v4(169, 254, 169, 254, 32, "cloud metadata endpoint", LinkLocal),
    v4(0, 0, 0, 0, 32, "unspecified", Private),
    v4(0, 0, 0, 0, 8, "\"this network\" (0.0.0.0/8)", Private),
    v4(127, 0, 0, 0, 8, "loopback", Private),
    v4(10, 0, 0, 0, 8, "private network (10.0.0.0/8)", Private),
    v4(
        172,
        16,
        0,
        0,
        12,
        "private network (172.16.0.0/12)",
        Private,
    ),
    v4(
        192,
        168,
        0,
        0,
        16,
        "private network (192.168.0.0/16)",
        Private,
    ),
    v4(169, 254, 0, 0, 16, "link-local", LinkLocal),
    v4(
        100,
        64,
        0,
        0,
        10,
        "carrier-grade NAT (100.64.0.0/10)",
        Private,
    ),
    v4(
        192,
        0,
        0,
        0,
        24,
        "IETF protocol assignments (192.0.0.0/24)",
        Private,
    ),
    v4(192, 0, 2, 0, 24, "documentation range", Private),
    v4(198, 51, 100, 0, 24, "documentation range", Private),
    v4(203, 0, 113, 0, 24, "documentation range", Private),
    v4(
        198,
        18,
        0,
        0,
        15,
        "benchmarking range (198.18.0.0/15)",
        Private,
    ),
    v4(224, 0, 0, 0, 4, "multicast", Private),
    v4(255, 255, 255, 255, 32, "broadcast", Private),
    v4(240, 0, 0, 0, 4, "reserved (240.0.0.0/4)", Private),
];

/// The refused IPv6 ranges that embed no IPv4 address, narrowest first
/// where they nest.
pub const IPV6_RANGES: &[Range] = &[
    v6([0, 0, 0, 0, 0, 0, 0, 0], 128, "unspecified", Private),
    v6([0, 0, 0, 0, 0, 0, 0, 1], 128, "loopback", Private),
    v6(
        [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254],
        128,
        "cloud metadata endpoint",
        LinkLocal,
    ),
    v6(
        [0xfc00, 0, 0, 0, 0, 0, 0, 0],
        7,
        "unique-local (fc00::/7)",
        Private,
    ),
    v6(
        [0xfe80, 0, 0, 0, 0, 0, 0, 0],
        10,
        "link-local (fe80::/10)",
        LinkLocal,
    ),
    v6(
        [0xfec0, 0, 0, 0, 0, 0, 0, 0],
        10,
        "site-local (fec0::/10)",
        Private,
    ),
    v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, "multicast", Private),
    v6(
        [0x0100, 0, 0, 0, 0, 0, 0, 0],
        64,
        "discard-only (100::/64)",
        Private,
    ),
    v6(
        [0x2001, 0x0db8, 0, 0, 0, 0, 0, 0],
        32,
        "documentation range (2001:db8::/32)",
        Private,
    ),
    v6(
        [0x2001, 0x0002, 0, 0, 0, 0, 0, 0],
        48,
        "benchmarking range (2001:2::/48)",
        Private,
    ),
    v6(
        [0x3fff, 0, 0, 0, 0, 0, 0, 0],
        20,
        "documentation range (3fff::/20)",
        Private,
    ),
];

/// The IPv6 ranges that embed or map an IPv4 address (IPv4-mapped and
/// -translated, IPv4-compatible, NAT64, 6to4, Teredo). The SSRF guard
/// judges an address in them by the IPv4 address inside; the network
/// namespace refuses them whole (IPv4-mapped addresses the kernel routes
/// as IPv4, so the IPv4 rules hold them), opened with private networks.
pub const IPV6_EMBEDDING_RANGES: &[Range] = &[
    v6(
        [0, 0, 0, 0, 0, 0xffff, 0, 0],
        96,
        "IPv4-mapped address (::ffff:0:0/96)",
        Private,
    ),
    v6(
        [0, 0, 0, 0, 0xffff, 0, 0, 0],
        96,
        "IPv4-translated address (::ffff:0:0:0/96)",
        Private,
    ),
    v6(
        [0, 0, 0, 0, 0, 0, 0, 0],
        96,
        "IPv4-compatible address (::/96)",
        Private,
    ),
    v6(
        [0x64, 0xff9b, 0, 0, 0, 0, 0, 0],
        96,
        "NAT64 address (64:ff9b::/96)",
        Private,
    ),
    v6(
        [0x64, 0xff9b, 1, 0, 0, 0, 0, 0],
        48,
        "NAT64 local-use address (64:ff9b:1::/48)",
        Private,
    ),
    v6(
        [0x2002, 0, 0, 0, 0, 0, 0, 0],
        16,
        "6to4 address (2002::/16)",
        Private,
    ),
    v6(
        [0x2001, 0, 0, 0, 0, 0, 0, 0],
        32,
        "Teredo address (2001::/32)",
        Private,
    ),
];

/// A NAT64 local-use address whose `u` octet is not zero: no valid form
/// of the prefix makes one, so it is refused whatever it holds.
pub const NAT64_LOCAL_USE_NONZERO_U: Range = v6(
    [0x64, 0xff9b, 1, 0, 0, 0, 0, 0],
    48,
    "NAT64 local-use address with a nonzero u octet (64:ff9b:1::/48)",
    Private,
);

/// The first range of [`IPV4_RANGES`] or [`IPV6_RANGES`] holding `ip`
/// itself (an embedded IPv4 address is not looked at).
pub fn direct_range(ip: IpAddr) -> Option<&'static Range> {
    let table = match ip {
        IpAddr::V4(_) => IPV4_RANGES,
        IpAddr::V6(_) => IPV6_RANGES,
    };
    table.iter().find(|range| range.contains(ip))
}

/// Every range, in the order a namespace installs them.
pub fn all_ranges() -> impl Iterator<Item = &'static Range> {
    IPV4_RANGES
        .iter()
        .chain(IPV6_RANGES)
        .chain(IPV6_EMBEDDING_RANGES)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn the_narrower_range_names_the_address() {
        assert_eq!(
            direct_range(ip("169.254.169.254")).unwrap().reason,
            "cloud metadata endpoint"
        );
        assert_eq!(
            direct_range(ip("169.254.1.1")).unwrap().reason,
            "link-local"
        );
        assert_eq!(direct_range(ip("0.0.0.0")).unwrap().reason, "unspecified");
        assert_eq!(
            direct_range(ip("255.255.255.255")).unwrap().reason,
            "broadcast"
        );
        assert_eq!(direct_range(ip("8.8.8.8")), None);
        assert_eq!(direct_range(ip("2606:4700::1111")), None);
    }

    const PRIVATE: Openers = Openers {
        private_networks: true,
        link_local_networks: false,
    };
    const LINK_LOCAL: Openers = Openers {
        private_networks: false,
        link_local_networks: true,
    };

    #[test]
    fn each_flag_opens_its_own_ranges_only() {
        // (address, opened by --allow-private-networks, by --allow-link-local-networks)
        for (address, private, link_local) in [
            ("127.0.0.1", true, false),
            ("10.1.2.3", true, false),
            ("::1", true, false),
            ("fd12::1", true, false),
            ("169.254.169.254", false, true),
            ("169.254.1.1", false, true),
            ("fe80::1", false, true),
            ("fd00:ec2::254", false, true),
        ] {
            let range = direct_range(ip(address)).unwrap();
            assert_eq!(range.is_open(PRIVATE), private, "{address}");
            assert_eq!(range.is_open(LINK_LOCAL), link_local, "{address}");
            assert!(!range.is_open(Openers::default()), "{address}");
        }
    }

    #[test]
    fn every_range_holds_its_own_first_address() {
        for range in all_ranges() {
            assert!(range.contains(range.network), "{range:?}");
            let max = if range.network.is_ipv4() { 32 } else { 128 };
            assert!(range.prefix <= max, "{range:?}");
        }
    }
}
