use std::collections::HashMap;

use pretty_assertions::assert_eq;

use super::*;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |k| map.get(k).cloned()
}

#[test]
fn fnv1a64_matches_the_published_vectors() {
    assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
}

#[test]
fn every_id_belongs_to_exactly_one_shard() {
    let shards: Vec<Shard> = (0..3).map(|i| Shard { index: i, count: 3 }).collect();
    let mut per_shard = [0usize; 3];
    for n in 0..300 {
        let id = format!("task-{n}");
        let owners: Vec<u64> = shards
            .iter()
            .filter(|s| s.owns(&id))
            .map(|s| s.index)
            .collect();
        assert_eq!(owners.len(), 1, "{id}: {owners:?}");
        per_shard[owners[0] as usize] += 1;
    }
    // Roughly even: no shard gets less than half its share.
    assert!(per_shard.iter().all(|n| *n > 50), "{per_shard:?}");
}

#[test]
fn specs_are_parsed_and_bad_ones_refused() {
    let none = env_of(&[]);
    assert_eq!(
        Shard::resolve(Some("1/4"), None, &none),
        Ok(Shard { index: 1, count: 4 })
    );
    assert_eq!(Shard::resolve(None, None, &none), Ok(Shard::ALL));
    for bad in ["4/4", "1", "a/b", "0/0", "-1/3"] {
        assert_eq!(
            Shard::resolve(Some(bad), None, &none),
            Err(ShardError::BadSpec(bad.to_owned()))
        );
    }
    assert_eq!(
        Shard::resolve(None, Some(3), &none),
        Err(ShardError::CountWithoutAuto)
    );
    assert_eq!(
        Shard::resolve(Some("0/3"), Some(3), &none),
        Err(ShardError::CountWithoutAuto)
    );
}

#[test]
fn auto_reads_kubernetes_and_slurm_only_when_asked() {
    let k8s = env_of(&[("JOB_COMPLETION_INDEX", "2")]);
    assert_eq!(
        Shard::resolve(Some("auto"), Some(3), &k8s),
        Ok(Shard { index: 2, count: 3 })
    );
    assert_eq!(
        Shard::resolve(Some("auto"), None, &k8s),
        Err(ShardError::NoCount("JOB_COMPLETION_INDEX"))
    );
    assert_eq!(Shard::resolve(None, None, &k8s), Ok(Shard::ALL));
    assert!(matches!(
        Shard::resolve(Some("auto"), Some(2), &k8s),
        Err(ShardError::OutOfRange {
            index: 2,
            count: 2,
            ..
        })
    ));

    let slurm = env_of(&[
        ("SLURM_ARRAY_TASK_ID", "5"),
        ("SLURM_ARRAY_TASK_MIN", "1"),
        ("SLURM_ARRAY_TASK_COUNT", "8"),
    ]);
    assert_eq!(
        Shard::resolve(Some("auto"), None, &slurm),
        Ok(Shard { index: 4, count: 8 })
    );
    assert_eq!(
        Shard::resolve(Some("auto"), Some(5), &slurm),
        Ok(Shard { index: 4, count: 5 })
    );

    assert_eq!(
        Shard::resolve(Some("auto"), Some(3), &env_of(&[])),
        Err(ShardError::NoEngine)
    );
    assert!(matches!(
        Shard::resolve(
            Some("auto"),
            Some(3),
            &env_of(&[("JOB_COMPLETION_INDEX", "x")])
        ),
        Err(ShardError::BadVar { .. })
    ));
}
