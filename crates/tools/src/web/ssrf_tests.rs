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

#[test]
fn the_default_policy_refuses_loopback_and_names_the_switch() {
    let socket: SocketAddr = "127.0.0.1:8080".parse().unwrap();
    let refused = AddressPolicy::public_only().check(socket).unwrap_err();
    assert_eq!(refused.address, ip("127.0.0.1"));
    let message = refused.to_string();
    assert!(message.contains("127.0.0.1 (loopback)"), "{message}");
    assert!(message.contains("allow_private_networks"), "{message}");
}

#[test]
fn allowing_private_networks_turns_the_filter_off() {
    let policy = AddressPolicy::allowing_private_networks(true);
    for socket in [
        "127.0.0.1:80",
        "[::1]:80",
        "169.254.169.254:80",
        "10.0.0.1:443",
    ] {
        assert_eq!(policy.check(socket.parse().unwrap()), Ok(()), "{socket}");
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
