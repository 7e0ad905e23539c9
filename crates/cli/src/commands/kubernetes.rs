//! `sojourn kubernetes`: the manifests that run `sojourn agent` on a
//! Kubernetes cluster (for `kubectl apply -f -`), or the Dockerfile of the
//! image they run. Kubernetes places, restarts and scales the agents;
//! sojourn brings no cluster manager of its own.
//!
//! - A StatefulSet (default): long-lived agents named by their pods
//!   (`sojourn-agent-0`, ...), which keep their names across restarts,
//!   with the headless Service a StatefulSet names. Or an Indexed Job
//!   (`--kind job`): agents that exit after `--idle-timeout` without work.
//! - Each agent on a node of its own (required pod anti-affinity; with
//!   `--share-nodes`, only preferred), with CPU and memory requests and
//!   limits alike (a benchmark's client wants guaranteed CPU).
//! - The store's URL and password, and the database's password, come from
//!   Secrets the user creates, by reference: nothing secret is ever in
//!   what this prints.
//!
//! Every string value is written as a JSON string, which is valid YAML
//! whatever it holds.

use std::process::ExitCode;

use anyhow::{bail, Result};

use crate::cli::{KubernetesArgs, KubernetesKind};

/// The Secret holding the store's URL (`url`) and password (`password`).
pub const RESULTS_SECRET: &str = "sojourn-results";
/// The Secret holding the database's password (`password`).
pub const DATABASE_SECRET: &str = "sojourn-database";

pub fn main(a: KubernetesArgs) -> Result<ExitCode> {
    if a.dockerfile {
        print!("{}", dockerfile());
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", manifests(&a)?);
    Ok(ExitCode::SUCCESS)
}

/// A YAML (JSON) string.
fn q(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialise")
}

/// A Kubernetes name (RFC 1123 label): lower-case alphanumerics and `-`.
fn check_name(flag: &str, v: &str) -> Result<()> {
    let ok = !v.is_empty()
        && v.len() <= 63
        && v.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !v.starts_with('-')
        && !v.ends_with('-');
    if !ok {
        bail!(
            "{flag} {v:?}: expected a Kubernetes name (at most 63 lower-case letters, digits \
             and '-', starting and ending with a letter or digit)"
        );
    }
    Ok(())
}

/// A CPU or memory quantity as Kubernetes writes them (`2`, `500m`,
/// `4Gi`).
fn check_quantity(flag: &str, v: &str) -> Result<()> {
    let digits = v.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &v[digits.len()..];
    let known = ["", "m", "k", "M", "G", "T", "Ki", "Mi", "Gi", "Ti"];
    if digits.is_empty() || digits.parse::<f64>().is_err() || !known.contains(&suffix) {
        bail!("{flag} {v:?}: expected a quantity such as 2, 1500m, 512Mi or 4Gi");
    }
    Ok(())
}

/// The manifests for `a`.
pub fn manifests(a: &KubernetesArgs) -> Result<String> {
    let agents = match a.agents {
        Some(0) | None => bail!("--agents: expected 1 or more agents"),
        Some(n) => n,
    };
    check_name("--namespace", &a.namespace)?;
    check_name("--name", &a.name)?;
    check_quantity("--cpu", &a.cpu)?;
    check_quantity("--memory", &a.memory)?;
    let mut selector = Vec::new();
    for kv in &a.node_selector {
        let Some((k, v)) = kv.split_once('=') else {
            bail!("--node-selector {kv:?}: expected KEY=VALUE, e.g. node.kubernetes.io/instance-type=n2-standard-8");
        };
        selector.push((k.to_string(), v.to_string()));
    }
    let ns = q(&a.namespace);
    let name = &a.name;
    let pod = pod_template(a, &selector);
    let header = format!(
        "# sojourn agents for a Kubernetes cluster: `sojourn kubernetes ... | kubectl apply -f -`.\n\
         # Before applying, create the Secrets they read (nothing secret is in this file):\n\
         #   kubectl -n {ns_raw} create secret generic {RESULTS_SECRET} \\\n\
         #     --from-literal=url=postgres://USER@HOST:5432/DB --from-literal=password=...\n\
         #   kubectl -n {ns_raw} create secret generic {DATABASE_SECRET} --from-literal=password=...\n\
         # Then coordinate from anywhere that reaches the store:\n\
         #   sojourn run --db URL -P workloada --agents {n} --results postgres://USER@HOST:5432/DB\n",
        ns_raw = a.namespace,
        n = agents
    );
    let body = match a.kind {
        KubernetesKind::Statefulset => format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: {qn}\n  namespace: {ns}\n  labels:\n    \
             app.kubernetes.io/name: {qn}\nspec:\n  clusterIP: None\n  selector:\n    \
             app.kubernetes.io/name: {qn}\n---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  \
             name: {qn}\n  namespace: {ns}\n  labels:\n    app.kubernetes.io/name: {qn}\nspec:\n  \
             serviceName: {qn}\n  replicas: {n}\n  podManagementPolicy: Parallel\n  selector:\n    \
             matchLabels:\n      app.kubernetes.io/name: {qn}\n  template:\n{pod}",
            qn = q(name),
            n = agents,
        ),
        KubernetesKind::Job => format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {qn}\n  namespace: {ns}\n  labels:\n    \
             app.kubernetes.io/name: {qn}\nspec:\n  completionMode: Indexed\n  completions: {n}\n  \
             parallelism: {n}\n  backoffLimit: {backoff}\n  template:\n{pod_job}",
            qn = q(name),
            n = agents,
            backoff = 3 * agents,
            pod_job = pod.replace(
                "      terminationGracePeriodSeconds: 30\n",
                "      restartPolicy: OnFailure\n      terminationGracePeriodSeconds: 30\n"
            ),
        ),
    };
    Ok(format!("{header}---\n{body}"))
}

/// The agents' pod template: one pod a node (or preferably so, with
/// --share-nodes), the agent's name from its pod, its credentials from
/// the Secrets, its resources.
fn pod_template(a: &KubernetesArgs, selector: &[(String, String)]) -> String {
    let name = &a.name;
    let labels = format!("        app.kubernetes.io/name: {}\n", q(name));
    let affinity = if a.share_nodes {
        format!(
            "        podAntiAffinity:\n          preferredDuringSchedulingIgnoredDuringExecution:\n          \
             - weight: 100\n            podAffinityTerm:\n              topologyKey: kubernetes.io/hostname\n              \
             labelSelector:\n                matchLabels:\n                  app.kubernetes.io/name: {}\n",
            q(name)
        )
    } else {
        format!(
            "        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n          \
             - topologyKey: kubernetes.io/hostname\n            labelSelector:\n              matchLabels:\n                \
             app.kubernetes.io/name: {}\n",
            q(name)
        )
    };
    let node_selector = if selector.is_empty() {
        String::new()
    } else {
        let mut s = "      nodeSelector:\n".to_string();
        for (k, v) in selector {
            s.push_str(&format!("        {}: {}\n", q(k), q(v)));
        }
        s
    };
    let (agent_name, index_env, idle) = match a.kind {
        KubernetesKind::Statefulset => (
            "$(POD_NAME)".to_string(),
            "            - name: POD_NAME\n              valueFrom:\n                fieldRef:\n                  fieldPath: metadata.name\n".to_string(),
            String::new(),
        ),
        KubernetesKind::Job => (
            format!("{name}-$(AGENT_INDEX)"),
            "            - name: AGENT_INDEX\n              valueFrom:\n                fieldRef:\n                  fieldPath: metadata.annotations['batch.kubernetes.io/job-completion-index']\n".to_string(),
            format!(", \"--idle-timeout\", {}", q(&a.idle_timeout.to_string())),
        ),
    };
    let secret_env = |var: &str, secret: &str, key: &str, optional: bool| {
        format!(
            "            - name: {var}\n              valueFrom:\n                secretKeyRef:\n                  \
             name: {}\n                  key: {key}\n{}",
            q(secret),
            if optional {
                "                  optional: true\n"
            } else {
                ""
            }
        )
    };
    let mut env = index_env;
    env.push_str(&secret_env("SOJOURN_RESULTS", RESULTS_SECRET, "url", false));
    env.push_str(&secret_env(
        "SOJOURN_RESULTS_PASSWORD",
        RESULTS_SECRET,
        "password",
        true,
    ));
    for var in [
        "PGPASSWORD",
        "MYSQL_PWD",
        "REDIS_PASSWORD",
        "CASSANDRA_PASSWORD",
    ] {
        env.push_str(&secret_env(var, DATABASE_SECRET, "password", true));
    }
    env.push_str(
        "            - name: SOJOURN_DATA_DIR\n              value: \"/var/lib/sojourn\"\n",
    );
    // A raw string, so the YAML's indentation reads as it will be applied.
    format!(
        r#"    metadata:
      labels:
{labels}    spec:
{node_selector}      affinity:
{affinity}      terminationGracePeriodSeconds: 30
      containers:
        - name: agent
          image: {}
          imagePullPolicy: IfNotPresent
          args: ["agent", "--name", {}{idle}]
          env:
{env}          resources:
            requests:
              cpu: {cpu}
              memory: {mem}
            limits:
              cpu: {cpu}
              memory: {mem}
          volumeMounts:
            - name: data
              mountPath: /var/lib/sojourn
      volumes:
        - name: data
          emptyDir: {{}}
"#,
        q(&a.image),
        q(&agent_name),
        cpu = q(&a.cpu),
        mem = q(&a.memory),
    )
}

/// The image the manifests run: sojourn built from this repository on
/// Debian, in a slim runtime image.
pub fn dockerfile() -> String {
    format!(
        "# The sojourn image the agents run. Build it from the repository's root:\n\
         #   docker build -t sojourn:{v} -f- . < <(sojourn kubernetes --dockerfile)\n\
         # and push it where the cluster pulls from (--image names it).\n\
         FROM rust:1-bookworm AS build\n\
         WORKDIR /src\n\
         COPY . .\n\
         RUN cargo build --release --locked -p sojourn\n\
         \n\
         FROM debian:bookworm-slim\n\
         RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \\\n    \
         && rm -rf /var/lib/apt/lists/*\n\
         COPY --from=build /src/target/release/sojourn /usr/local/bin/sojourn\n\
         RUN useradd --system --uid 10001 sojourn && mkdir -p /var/lib/sojourn && chown sojourn /var/lib/sojourn\n\
         USER 10001\n\
         ENV SOJOURN_DATA_DIR=/var/lib/sojourn\n\
         ENTRYPOINT [\"sojourn\"]\n\
         CMD [\"agent\"]\n",
        v = env!("CARGO_PKG_VERSION")
    )
}
