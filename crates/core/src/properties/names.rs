//! The property names sojourn expects: YCSB's client, core workload and
//! measurements, and sojourn's own, for the misspelt-name check.

/// Every property name YCSB's client, core workload and measurements read,
/// plus sojourn's own. Used to warn about names that are none of these.
pub const CORE_PROPERTIES: &[&str] = &[
    // CoreWorkload: record shape
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
    // Client
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

/// Prefixes under which YCSB passes whole families of settings through
/// (`htrace.*` configures its tracer), so any name under them is expected.
pub const CORE_PROPERTY_PREFIXES: &[&str] = &["htrace."];
