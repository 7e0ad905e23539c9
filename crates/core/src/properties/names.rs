//! The property names sojourn expects: YCSB's client, core workload and
//! measurements, and sojourn's own, for the misspelt-name check.

/// Every property name YCSB's client, core workload and measurements read,
/// plus sojourn's own. Used to warn about names that are none of these.
pub const CORE_PROPERTIES: &[&str] = &concat::<
    { CORE_WORKLOAD_PROPERTIES.len() + CLIENT_PROPERTIES.len() },
>(CORE_WORKLOAD_PROPERTIES, CLIENT_PROPERTIES);

/// The names YCSB's CoreWorkload reads.
pub const CORE_WORKLOAD_PROPERTIES: &[&str] = &[
    // record shape
    "table",
    "fieldcount",
    "fieldnameprefix",
    "fieldlength",
    "minfieldlength",
    "fieldlengthdistribution",
    "fieldlengthhistogram",
    // counts and key naming
    "recordcount",
    "operationcount",
    "insertstart",
    "insertcount",
    "zeropadding",
    "insertorder",
    // operation mix
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    // fields
    "readallfields",
    "readallfieldsbyname",
    "writeallfields",
    "dataintegrity",
    // distributions
    "requestdistribution",
    "minscanlength",
    "maxscanlength",
    "scanlengthdistribution",
    "hotspotdatafraction",
    "hotspotopnfraction",
    "exponential.percentile",
    "exponential.frac",
    "core_workload_insertion_retry_limit",
    "core_workload_insertion_retry_interval",
];

/// The names YCSB's client and measurements read, and sojourn's own:
/// every workload's, not the core workload's alone.
pub const CLIENT_PROPERTIES: &[&str] = &[
    // client
    "workload",
    "db",
    "exporter",
    "exportfile",
    "threadcount",
    "target",
    "maxexecutiontime",
    "dotransactions",
    "status",
    "status.interval",
    "label",
    "debug",
    // measurements
    "measurementtype",
    "measurement.interval",
    "measurement.trackjvm",
    "measurement.histogram.verbose",
    "measurement.raw.output_file",
    "measurement.raw.no_summary",
    "histogram.buckets",
    "hdrhistogram.percentiles",
    "hdrhistogram.fileoutput",
    "hdrhistogram.output.path",
    "timeseries.granularity",
    "reportlatencyforeacherror",
    "latencytrackederrors",
    // sojourn
    "seed",
    "warmup",
    "arrival",
    "dropdata",
    "timeout.ms",
];

/// `a` then `b`, as one array of `N` names (`N` being their lengths' sum).
const fn concat<const N: usize>(a: &[&'static str], b: &[&'static str]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < a.len() {
        out[i] = a[i];
        i += 1;
    }
    let mut j = 0;
    while j < b.len() {
        out[a.len() + j] = b[j];
        j += 1;
    }
    out
}

/// Prefixes under which YCSB passes whole families of settings through
/// (`htrace.*` configures its tracer), so any name under them is expected.
pub const CORE_PROPERTY_PREFIXES: &[&str] = &["htrace."];
