use std::net::{IpAddr, SocketAddr};

use super::*;

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

#[test]
fn non_public_addresses_are_refused_with_their_range() {
    let cases = [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("10.0.0.1", "private network (10.0.0.0/8)"),
        ("172.16.0.1", "private network (172.16.0.0/12)"),
        ("172.31.255.255", "private network (172.16.0.0/12)"),
        ("192.168.1.1", "private network (192.168.0.0/16)"),
        ("169.254.169.254", "cloud metadata endpoint"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local (fe80::/10)"),
        ("fc00::1", "unique-local (fc00::/7)"),
        ("fd12:3456::1", "unique-local (fc00::/7)"),
        ("fd00:ec2::254", "cloud metadata endpoint"),
        ("100.64.0.1", "carrier-grade NAT (100.64.0.0/10)"),
        ("100.127.255.254", "carrier-grade NAT (100.64.0.0/10)"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("255.255.255.255", "broadcast"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.1.2.3", "private network (10.0.0.0/8)"),
        ("::ffff:169.254.169.254", "cloud metadata endpoint"),
        ("::127.0.0.1", "loopback"),
        ("64:ff9b::a00:1", "private network (10.0.0.0/8)"),
        ("192.0.2.1", "documentation range"),
        ("2001:db8::1", "documentation range (2001:db8::/32)"),
    ];
    for (address, reason) in cases {
        assert_eq!(non_public_reason(ip(address)), Some(reason), "{address}");
    }
}

#[test]
fn public_addresses_pass() {
    for address in [
        "93.184.215.14",
        "8.8.8.8",
        "172.32.0.1",
        "100.128.0.1",
        "169.255.0.1",
        "2606:4700::1111",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
    ] {
        assert_eq!(non_public_reason(ip(address)), None, "{address}");
    }
}

/// Every IPv6 range that embeds or maps an IPv4 address, with a loopback,
/// a private, a metadata and a public IPv4 host inside: the verdict is the
/// embedded host's (`None`: allowed).
#[test]
fn ipv6_ranges_that_embed_ipv4_are_judged_by_the_embedded_address() {
    const LOOPBACK: Option<&str> = Some("loopback");
    const PRIVATE_10: Option<&str> = Some("private network (10.0.0.0/8)");
    const METADATA: Option<&str> = Some("cloud metadata endpoint");
    let cases: &[(&str, &str, Option<&str>)] = &[
        // (range, address, verdict)
        ("IPv4-mapped ::ffff:0:0/96", "::ffff:127.0.0.1", LOOPBACK),
        ("IPv4-mapped ::ffff:0:0/96", "::ffff:a9fe:a9fe", METADATA),
        ("IPv4-mapped ::ffff:0:0/96", "::ffff:8.8.8.8", None),
        ("IPv4-compatible ::/96", "::127.0.0.1", LOOPBACK),
        ("IPv4-compatible ::/96", "::10.1.2.3", PRIVATE_10),
        (
            "IPv4-compatible ::/96",
            "::8.8.8.8",
            Some("IPv4-compatible address (::/96)"),
        ),
        (
            "IPv4-translated ::ffff:0:0:0/96",
            "::ffff:0:7f00:1",
            LOOPBACK,
        ),
        (
            "IPv4-translated ::ffff:0:0:0/96",
            "::ffff:0:a9fe:a9fe",
            METADATA,
        ),
        ("IPv4-translated ::ffff:0:0:0/96", "::ffff:0:808:808", None),
        ("6to4 2002::/16", "2002:7f00:1::1", LOOPBACK),
        ("6to4 2002::/16", "2002:a9fe:a9fe::", METADATA),
        ("6to4 2002::/16", "2002:a00:1:1::5", PRIVATE_10),
        ("6to4 2002::/16", "2002:808:808::1", None),
        ("NAT64 well-known 64:ff9b::/96", "64:ff9b::7f00:1", LOOPBACK),
        (
            "NAT64 well-known 64:ff9b::/96",
            "64:ff9b::a00:1",
            PRIVATE_10,
        ),
        ("NAT64 well-known 64:ff9b::/96", "64:ff9b::808:808", None),
        // Local-use: the IPv4 address sits where the operator's prefix
        // length puts it (/48, /56, /64, /96); every form the address fits
        // is checked, so only an unambiguous public one passes.
        (
            "NAT64 local-use 64:ff9b:1::/48 as /96",
            "64:ff9b:1::7f00:1",
            LOOPBACK,
        ),
        (
            "NAT64 local-use 64:ff9b:1::/48 as /96",
            "64:ff9b:1::808:808",
            None,
        ),
        (
            "NAT64 local-use 64:ff9b:1::/48 as /48",
            "64:ff9b:1:7f00:0:100::",
            LOOPBACK,
        ),
        (
            "NAT64 local-use 64:ff9b:1::/48 as /56",
            "64:ff9b:1:a9:fe:a9fe::",
            METADATA,
        ),
        (
            "NAT64 local-use 64:ff9b:1::/48 as /64",
            "64:ff9b:1:0:a:0:100:0",
            PRIVATE_10,
        ),
        // 8.8.8.8 as /48 is 0.0.0.0 as /96: which one the translator
        // reaches is not known, so it is refused.
        (
            "NAT64 local-use 64:ff9b:1::/48 as /48",
            "64:ff9b:1:808:8:808::",
            Some("unspecified"),
        ),
        (
            "NAT64 local-use 64:ff9b:1::/48, u octet set",
            "64:ff9b:1:0:100::",
            Some("NAT64 local-use address with a nonzero u octet (64:ff9b:1::/48)"),
        ),
        // Teredo: server 65.54.227.120 (public) in bits 32..64; the client
        // is the last 32 bits inverted.
        (
            "Teredo 2001::/32, client",
            "2001:0:4136:e378:8000:63bf:80ff:fffe",
            LOOPBACK,
        ),
        (
            "Teredo 2001::/32, client",
            "2001:0:4136:e378:8000:63bf:5601:5601",
            METADATA,
        ),
        (
            "Teredo 2001::/32, server",
            "2001:0:7f00:1:8000:63bf:f7f7:f7f7",
            LOOPBACK,
        ),
        (
            "Teredo 2001::/32, public",
            "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
            None,
        ),
    ];
    for (range, address, verdict) in cases {
        assert_eq!(
            non_public_reason(ip(address)),
            *verdict,
            "{range}: {address}"
        );
    }
}

/// The other special IPv6 ranges, none of which is a public host.
#[test]
fn special_ipv6_ranges_are_refused() {
    let cases = [
        ("2001:db8::1", "documentation range (2001:db8::/32)"),
        ("3fff:1::1", "documentation range (3fff::/20)"),
        ("100::1", "discard-only (100::/64)"),
        ("ff05::2", "multicast"),
        ("ff0e::1", "multicast"),
        ("fec0::1", "site-local (fec0::/10)"),
        ("2001:2::1", "benchmarking range (2001:2::/48)"),
    ];
    for (address, reason) in cases {
        assert_eq!(non_public_reason(ip(address)), Some(reason), "{address}");
    }
    for public in ["100:0:0:1::1", "2001:4860:4860::8888", "2a00:1450::1"] {
        assert_eq!(non_public_reason(ip(public)), None, "{public}");
    }
}

#[test]
fn the_default_policy_refuses_loopback_and_names_the_switch() {
    let socket: SocketAddr = "127.0.0.1:8080".parse().unwrap();
    let refused = AddressPolicy::public_only().check(socket).unwrap_err();
    assert_eq!(refused.address, ip("127.0.0.1"));
    let message = refused.to_string();
    assert!(message.contains("127.0.0.1 (loopback)"), "{message}");
    assert!(message.contains("allow_private_networks"), "{message}");
}

/// Link-local and cloud metadata sockets, IPv4-mapped among them: what
/// only `--allow-link-local-networks` opens.
const LINK_LOCAL_SOCKETS: [&str; 5] = [
    "169.254.169.254:80",
    "169.254.1.1:80",
    "[fe80::1]:80",
    "[fd00:ec2::254]:80",
    "[::ffff:169.254.169.254]:80",
];

#[test]
fn allowing_private_networks_opens_all_but_link_local() {
    let policy = AddressPolicy::allowing_private_networks(true);
    for socket in [
        "127.0.0.1:80",
        "[::1]:80",
        "10.0.0.1:443",
        "[::ffff:10.0.0.1]:80",
    ] {
        assert_eq!(policy.check(socket.parse().unwrap()), Ok(()), "{socket}");
    }
    // The cloud metadata services and the rest of link-local stay refused
    // (the one table, crates/sandbox/src/net/ranges.rs, opens them with
    // their own flag only), and the refusal names that flag.
    for socket in LINK_LOCAL_SOCKETS {
        let refused = policy.check(socket.parse().unwrap()).unwrap_err();
        let message = refused.to_string();
        assert!(message.contains("--allow-link-local-networks"), "{message}");
    }
}

#[test]
fn allowing_link_local_networks_opens_them_and_nothing_else() {
    let policy = AddressPolicy::opening(Openers {
        private_networks: false,
        link_local_networks: true,
    });
    for socket in LINK_LOCAL_SOCKETS {
        assert_eq!(policy.check(socket.parse().unwrap()), Ok(()), "{socket}");
    }
    for socket in ["127.0.0.1:80", "[::1]:80", "10.0.0.1:443", "[fd12::1]:80"] {
        let refused = policy.check(socket.parse().unwrap()).unwrap_err();
        assert!(
            refused.to_string().contains("--allow-private-networks"),
            "{refused}"
        );
    }
}

#[test]
fn an_allowed_socket_lets_only_that_address_and_port_through() {
    let allowed: SocketAddr = "127.0.0.1:4000".parse().unwrap();
    let policy = AddressPolicy::public_only().allow_socket(allowed);
    assert_eq!(policy.check(allowed), Ok(()));
    for other in ["127.0.0.1:4001", "127.0.0.2:4000", "[::1]:4000"] {
        assert!(policy.check(other.parse().unwrap()).is_err(), "{other}");
    }
}
