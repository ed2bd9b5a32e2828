use super::*;

const ME: Observer = Observer { pid: 100, sid: 100 };

fn scope() -> TreeScope {
    TreeScope {
        leader: 200,
        pgid: 200,
        leader_start: 5_000,
        pipe_inodes: vec![77],
    }
}

fn proc(pid: u32, ppid: u32, pgid: i32, sid: i32, state: char, start: u64) -> ProcStat {
    ProcStat {
        pid,
        state,
        ppid,
        pgid,
        sid,
        start_ticks: start,
        exiting: false,
    }
}

fn never(_: u32, _: &[u64]) -> bool {
    false
}

fn nowhere(_: u32) -> bool {
    false
}

fn probes<'a>(holds_pipe: &'a dyn Fn(u32, &[u64]) -> bool) -> Probes<'a> {
    Probes {
        holds_pipe,
        in_sandbox_cgroup: &nowhere,
    }
}

#[test]
fn group_members_and_their_descendants_are_leftovers() {
    let table = [
        proc(100, 1, 100, 100, 'S', 10),
        proc(200, 100, 200, 100, 'Z', 5_000),
        proc(201, 100, 200, 100, 'S', 5_001),
        proc(202, 201, 202, 202, 'S', 5_002),
        proc(300, 100, 100, 100, 'S', 6_000),
    ];
    let got = find_leftovers(&scope(), &table, ME, None, &[], &[77], &probes(&never));
    assert_eq!(got.alive, vec![201, 202]);
    assert!(got.zombies.is_empty());
}

#[test]
fn pipe_holders_are_leftovers_even_in_another_session() {
    let table = [proc(400, 1, 400, 400, 'S', 5_100)];
    let holds = |pid: u32, inodes: &[u64]| pid == 400 && inodes.contains(&77);
    let got = find_leftovers(&scope(), &table, ME, None, &[], &[77], &probes(&holds));
    assert_eq!(got.alive, vec![400]);
    let closed = find_leftovers(&scope(), &table, ME, None, &[], &[], &probes(&holds));
    assert!(
        closed.alive.is_empty(),
        "a stream at EOF has no holders to hunt"
    );
}

#[test]
fn orphans_from_another_session_started_after_the_leader_are_ours() {
    let table = [
        proc(500, 100, 500, 500, 'S', 5_500),
        proc(501, 100, 501, 501, 'S', 4_000),
        proc(502, 100, 100, 100, 'S', 5_500),
        proc(503, 100, 503, 503, 'Z', 5_600),
    ];
    let got = find_leftovers(&scope(), &table, ME, None, &[], &[], &probes(&never));
    assert_eq!(
        got.alive,
        vec![500],
        "older orphans and our own session's children stay"
    );
    assert_eq!(got.zombies, vec![503]);
}

#[test]
fn other_live_trees_keep_their_processes() {
    let other = TreeScope {
        leader: 600,
        pgid: 600,
        leader_start: 4_000,
        pipe_inodes: vec![88],
    };
    let table = [
        proc(600, 100, 600, 100, 'S', 4_000),
        proc(601, 100, 600, 601, 'S', 5_600),
        proc(602, 100, 602, 602, 'S', 5_600),
    ];
    let holds = |pid: u32, inodes: &[u64]| pid == 602 && inodes.contains(&88);
    let got = find_leftovers(&scope(), &table, ME, None, &[other], &[], &probes(&holds));
    assert!(got.alive.is_empty(), "{got:?}");
}

#[test]
fn orphans_in_another_childs_cgroup_are_left_alone() {
    let table = [proc(500, 100, 500, 500, 'S', 5_500)];
    let elsewhere = |pid: u32| pid == 500;
    let probes = Probes {
        holds_pipe: &never,
        in_sandbox_cgroup: &elsewhere,
    };
    let got = find_leftovers(&scope(), &table, ME, None, &[], &[], &probes);
    assert!(got.alive.is_empty(), "{got:?}");
}

#[test]
fn with_a_cgroup_orphans_outside_it_are_left_alone() {
    let table = [
        proc(500, 100, 500, 500, 'S', 5_500),
        proc(501, 100, 501, 501, 'S', 5_500),
    ];
    let got = find_leftovers(
        &scope(),
        &table,
        ME,
        Some(&[501]),
        &[],
        &[],
        &probes(&never),
    );
    assert_eq!(got.alive, vec![501]);
}

#[test]
fn cgroup_members_are_leftovers_whatever_their_session() {
    let table = [proc(700, 1, 700, 700, 'S', 1)];
    let got = find_leftovers(
        &scope(),
        &table,
        ME,
        Some(&[700]),
        &[],
        &[],
        &probes(&never),
    );
    assert_eq!(got.alive, vec![700]);
}

#[test]
fn a_process_already_exiting_is_waited_for_not_reported() {
    let mut exiting = proc(201, 100, 200, 100, 'R', 5_001);
    exiting.exiting = true;
    let table = [exiting, proc(202, 100, 200, 100, 'S', 5_002)];
    let got = find_leftovers(&scope(), &table, ME, None, &[], &[], &probes(&never));
    assert_eq!(got.alive, vec![202]);
    assert_eq!(got.dying, vec![201]);
}
