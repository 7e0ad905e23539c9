//! `sojourn kubernetes`: the manifests validate against the official
//! OpenAPI schemas of several Kubernetes versions (strictly: no field the
//! API does not know), for several combinations of flags, and hold no
//! secret; bad flags are refused naming them; the Dockerfile builds the
//! binary the agents run.

mod util;

use sojourn_testkit::needs::{find_binary, Need};
use sojourn_testkit::process::{output_within, TOOL_LIMIT};
use util::*;

/// Two current Kubernetes versions and the oldest one still supported
/// upstream when this was written.
const VERSIONS: [&str; 3] = ["1.33.0", "1.35.0", "1.37.0"];

/// `sojourn ARGS`, which need no data directory.
fn k8s(args: &[&str]) -> std::process::Output {
    bin().args(args).run_to_end()
}

#[test]
fn manifests_validate_for_several_versions_and_hold_no_secret() {
    let Some(validate) = find_binary(Need::Kubernetes, "sojourn-kubernetes-validate", &[]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cases: [&[&str]; 4] = [
        &["--agents", "6"],
        &["--agents", "3", "--kind", "job", "--idle-timeout", "120"],
        &[
            "--agents",
            "64",
            "--namespace",
            "bench",
            "--name",
            "load-gen",
            "--image",
            "registry.example.com/team/sojourn:0.1.0",
            "--cpu",
            "1500m",
            "--memory",
            "512Mi",
            "--node-selector",
            "node.kubernetes.io/instance-type=n2-standard-8",
            "--node-selector",
            "pool=clients",
            "--share-nodes",
        ],
        &["--agents", "1", "--kind", "job", "--share-nodes"],
    ];
    for (i, args) in cases.iter().enumerate() {
        let mut a = vec!["kubernetes"];
        a.extend_from_slice(args);
        let out = k8s(&a);
        let yaml = ok(&out);
        let file = dir.path().join(format!("m{i}.yaml"));
        std::fs::write(&file, &yaml).unwrap();
        for v in VERSIONS {
            let checked = output_within(
                std::process::Command::new(&validate)
                    .args(["--strict", "-k", v])
                    .arg(&file),
                None,
                TOOL_LIMIT,
            );
            let said = format!("{}{}", text(&checked.stdout), text(&checked.stderr));
            assert!(
                checked.status.success(),
                "{args:?} against {v}:\n{said}\n{yaml}"
            );
            assert!(!said.contains("ERROR"), "{said}");
        }
        // Secrets by reference only.
        assert!(yaml.contains("secretKeyRef"), "{yaml}");
        // Outside the comments that show how to create the Secrets, no
        // value could hold a password.
        let manifest: String = yaml
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n");
        for word in ["password=", "://", "value: \"pass"] {
            assert!(!manifest.contains(word), "{word}: {manifest}");
        }
        let n = args[1];
        if args.contains(&"job") {
            assert!(yaml.contains(&format!("completions: {n}")), "{yaml}");
        } else {
            assert!(yaml.contains(&format!("replicas: {n}")), "{yaml}");
        }
    }
    // The third case's settings reach the pods.
    let third = std::fs::read_to_string(dir.path().join("m2.yaml")).unwrap();
    for want in [
        "namespace: \"bench\"",
        "image: \"registry.example.com/team/sojourn:0.1.0\"",
        "cpu: \"1500m\"",
        "memory: \"512Mi\"",
        "\"node.kubernetes.io/instance-type\": \"n2-standard-8\"",
        "preferredDuringSchedulingIgnoredDuringExecution",
    ] {
        assert!(third.contains(want), "{want} missing:\n{third}");
    }
}

#[test]
fn bad_flags_are_refused_and_the_dockerfile_builds_the_agent() {
    for (args, expect) in [
        (vec!["kubernetes", "--agents", "0"], "--agents"),
        (
            vec!["kubernetes", "--agents", "2", "--cpu", "lots"],
            "--cpu \"lots\"",
        ),
        (
            vec!["kubernetes", "--agents", "2", "--namespace", "Bench_1"],
            "--namespace",
        ),
        (
            vec!["kubernetes", "--agents", "2", "--node-selector", "pool"],
            "KEY=VALUE",
        ),
        (vec!["kubernetes"], "--agents"),
    ] {
        let out = k8s(&args);
        let e = text(&out.stderr);
        assert!(!out.status.success() && e.contains(expect), "{args:?}: {e}");
    }
    let docker = ok(&k8s(&["kubernetes", "--dockerfile"]));
    for want in [
        "cargo build --release --locked -p sojourn",
        "ENTRYPOINT [\"sojourn\"]",
        "CMD [\"agent\"]",
        "USER 10001",
    ] {
        assert!(docker.contains(want), "{want}:\n{docker}");
    }
}
