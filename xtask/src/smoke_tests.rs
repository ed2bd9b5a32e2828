use super::*;

const ZEN4: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n\
model name\t: AMD EPYC\nstepping\t: 1\ncpu MHz\t\t: 2596.096\nflags\t\t: fpu sse2 avx2 avx512f\n\
bogomips\t: 5192.27\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n";

fn machine(cpuinfo: &str, kernel: &str) -> Machine {
    Machine {
        cpu: cpu_identity(cpuinfo),
        kernel: kernel.to_owned(),
    }
}

#[test]
fn the_identity_is_the_first_cpu_without_what_changes_between_readings() {
    let identity = cpu_identity(ZEN4);
    assert_eq!(
        identity,
        "vendor_id: AuthenticAMD\ncpu family: 25\nmodel: 17\nmodel name: AMD EPYC\n\
         stepping: 1\nflags: fpu sse2 avx2 avx512f\n"
    );
}

#[test]
fn the_key_changes_with_the_flags_or_the_kernel_and_not_with_the_clock() {
    let here = machine(ZEN4, "6.18.44");
    let other_clock = machine(&ZEN4.replace("2596.096", "3100.000"), "6.18.44");
    assert_eq!(here.key(), other_clock.key());
    let no_avx512 = machine(&ZEN4.replace(" avx512f", ""), "6.18.44");
    assert_ne!(here.key(), no_avx512.key());
    assert_ne!(here.key(), machine(ZEN4, "6.1.0").key());
    assert_eq!(here.key().len(), 16);
}

#[test]
fn a_machine_is_described_by_its_cpu_model_and_kernel() {
    assert_eq!(
        machine(ZEN4, "6.18.44").describe(),
        "AMD EPYC, Linux 6.18.44"
    );
    let arm = "processor\t: 0\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\n";
    assert_eq!(
        machine(arm, "6.1").describe(),
        format!("{}, Linux 6.1", std::env::consts::ARCH)
    );
}

#[test]
fn a_record_is_per_machine() {
    let entry = tempfile::tempdir().unwrap();
    let here = machine(ZEN4, "6.18.44");
    let other = machine(ZEN4, "6.1.0");
    let record = record_path(entry.path(), &here);
    std::fs::create_dir_all(record.parent().unwrap()).unwrap();
    std::fs::write(&record, "AMD EPYC\n").unwrap();
    assert!(passed_on(entry.path(), &here));
    assert!(!passed_on(entry.path(), &other));
}
