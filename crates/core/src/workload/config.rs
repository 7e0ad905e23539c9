//! CoreWorkload's properties, typed and validated, with YCSB's defaults.
//! Every error names where the value came from (file and line, or `-p`) and
//! what would be accepted; impossible combinations are refused here, before
//! anything runs.

use std::path::PathBuf;

use serde::Serialize;

use crate::properties::{Properties, PropertyError};

/// The most fields a record may have (`fieldcount`).
const MAX_FIELDS: u64 = 1_000_000;
/// The most bytes a record may hold (`fieldcount` × `fieldlength`).
const MAX_RECORD_BYTES: u64 = 256 << 20;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RequestDistribution {
    Uniform,
    Zipfian,
    Latest,
    Hotspot,
    Sequential,
    Exponential,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldLengthDistribution {
    Constant,
    Uniform,
    Zipfian,
    Histogram(PathBuf),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScanLengthDistribution {
    Uniform,
    Zipfian,
}

/// The operation mix, as given (not normalised).
#[derive(Copy, Clone, Debug, PartialEq, Serialize)]
pub struct Proportions {
    pub read: f64,
    pub update: f64,
    pub insert: f64,
    pub scan: f64,
    pub read_modify_write: f64,
}

/// Every CoreWorkload property, resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CoreConfig {
    pub table: String,
    pub field_count: usize,
    pub field_prefix: String,
    pub field_length: u64,
    pub min_field_length: u64,
    pub field_length_distribution: FieldLengthDistribution,
    pub record_count: u64,
    pub operation_count: u64,
    pub insert_start: u64,
    pub insert_count: u64,
    pub zero_padding: usize,
    pub ordered_inserts: bool,
    pub proportions: Proportions,
    pub read_all_fields: bool,
    pub write_all_fields: bool,
    pub data_integrity: bool,
    pub request_distribution: RequestDistribution,
    pub min_scan_length: u64,
    pub max_scan_length: u64,
    pub scan_length_distribution: ScanLengthDistribution,
    pub hotspot_data_fraction: f64,
    pub hotspot_opn_fraction: f64,
    pub exponential_percentile: f64,
    pub exponential_frac: f64,
    pub insertion_retry_limit: u32,
    #[serde(skip)]
    pub insertion_retry_interval: std::time::Duration,
}

fn fraction(p: &Properties, key: &str, default: f64) -> Result<f64, PropertyError> {
    let v = p.get_f64(key, default)?;
    if !(0.0..=1.0).contains(&v) {
        return Err(p.invalid(key, "must be a fraction between 0 and 1"));
    }
    Ok(v)
}

/// Refuse a `workload` that names neither YCSB's core workload nor one of
/// sojourn's own.
fn check_workload(p: &Properties) -> Result<(), PropertyError> {
    let workload = p.get_str("workload", "core");
    let accepted = [
        "core",
        "site.ycsb.workloads.CoreWorkload",
        "com.yahoo.ycsb.workloads.CoreWorkload",
    ];
    if !accepted.iter().any(|a| a.eq_ignore_ascii_case(workload)) {
        return Err(p.invalid(
            "workload",
            format!(
                "is not a workload sojourn knows; accepted: {}, vote, keyvalue",
                accepted.join(", ")
            ),
        ));
    }
    Ok(())
}

/// The fields of a record: how many, how long, and how their lengths are
/// drawn.
fn fields(p: &Properties) -> Result<(u64, u64, u64, FieldLengthDistribution), PropertyError> {
    // Bounds far above any table a database takes (PostgreSQL: 1,600
    // columns), low enough that the field names and one record of
    // each worker fit in memory instead of aborting on allocation.
    let field_count = p.get_u64_in("fieldcount", 10, 1..=MAX_FIELDS)?;
    let field_length = p.get_u64("fieldlength", 100)?;
    if field_count.saturating_mul(field_length) > MAX_RECORD_BYTES {
        return Err(p.invalid(
            "fieldlength",
            format!(
                "with fieldcount={field_count} makes records of {} bytes; a record may \
                 hold at most {MAX_RECORD_BYTES} bytes (256 MiB)",
                field_count as u128 * field_length as u128
            ),
        ));
    }
    let min_field_length = p.get_u64("minfieldlength", 1)?;
    let fld = p.get_choice(
        "fieldlengthdistribution",
        "constant",
        &["constant", "uniform", "zipfian", "histogram"],
    )?;
    let field_length_distribution = match fld {
        "uniform" => FieldLengthDistribution::Uniform,
        "zipfian" => FieldLengthDistribution::Zipfian,
        "histogram" => {
            let file = p.get_str("fieldlengthhistogram", "hist.txt");
            let path = match p.entry("fieldlengthhistogram").map(|e| &e.origin) {
                // A relative histogram file is looked up beside the
                // workload file that named it, then in the working directory.
                Some(crate::properties::Origin::File { path, .. }) => path
                    .parent()
                    .map(|d| d.join(file))
                    .filter(|c| c.exists())
                    .unwrap_or_else(|| PathBuf::from(file)),
                _ => PathBuf::from(file),
            };
            FieldLengthDistribution::Histogram(path)
        }
        _ => FieldLengthDistribution::Constant,
    };
    if field_length_distribution != FieldLengthDistribution::Constant
        && !matches!(
            field_length_distribution,
            FieldLengthDistribution::Histogram(_)
        )
        && min_field_length > field_length
    {
        return Err(p.invalid(
            "minfieldlength",
            format!("is larger than fieldlength ({field_length})"),
        ));
    }
    Ok((
        field_count,
        field_length,
        min_field_length,
        field_length_distribution,
    ))
}

/// The records a load inserts and the operations a run does:
/// `(recordcount, operationcount, insertstart, insertcount)`.
fn inserts(p: &Properties) -> Result<(u64, u64, u64, u64), PropertyError> {
    let record_count = p.get_u64("recordcount", 0)?;
    if record_count == 0 {
        return Err(p.invalid(
            "recordcount",
            "must be at least 1 (give a workload file with -P, or -p recordcount=N)",
        ));
    }
    let operation_count = p.get_u64("operationcount", 0)?;
    let insert_start = p.get_u64("insertstart", 0)?;
    let insert_count = match p.entry("insertcount") {
        Some(_) => p.get_u64("insertcount", 0)?,
        None => record_count.saturating_sub(insert_start),
    };
    if insert_start
        .checked_add(insert_count)
        .is_none_or(|end| end > record_count)
    {
        return Err(p.invalid(
            "insertcount",
            format!(
                "insertstart ({insert_start}) + insertcount ({insert_count}) exceeds recordcount ({record_count}); \
                 each client loads keys insertstart..insertstart+insertcount of recordcount"
            ),
        ));
    }
    if insert_count == 0 {
        return Err(p.invalid("insertcount", "must be at least 1"));
    }
    Ok((record_count, operation_count, insert_start, insert_count))
}

/// The operation mix, at least one share above 0.
fn proportions(p: &Properties) -> Result<Proportions, PropertyError> {
    let proportions = Proportions {
        read: fraction(p, "readproportion", 0.95)?,
        update: fraction(p, "updateproportion", 0.05)?,
        insert: fraction(p, "insertproportion", 0.0)?,
        scan: fraction(p, "scanproportion", 0.0)?,
        read_modify_write: fraction(p, "readmodifywriteproportion", 0.0)?,
    };
    let sum = proportions.read
        + proportions.update
        + proportions.insert
        + proportions.scan
        + proportions.read_modify_write;
    if sum <= 0.0 {
        return Err(p.invalid(
            "readproportion",
            "every operation proportion (read, update, insert, scan, readmodifywrite) is 0; at least one must be above 0",
        ));
    }
    Ok(proportions)
}

/// Which keys the run's operations pick.
fn request_distribution(p: &Properties) -> Result<RequestDistribution, PropertyError> {
    let rd = p.get_choice(
        "requestdistribution",
        "uniform",
        &[
            "uniform",
            "zipfian",
            "latest",
            "hotspot",
            "sequential",
            "exponential",
        ],
    )?;
    let request_distribution = match rd {
        "zipfian" => RequestDistribution::Zipfian,
        "latest" => RequestDistribution::Latest,
        "hotspot" => RequestDistribution::Hotspot,
        "sequential" => RequestDistribution::Sequential,
        "exponential" => RequestDistribution::Exponential,
        _ => RequestDistribution::Uniform,
    };
    Ok(request_distribution)
}

/// How many records a scan reads: `(min, max, distribution)`.
fn scans(p: &Properties) -> Result<(u64, u64, ScanLengthDistribution), PropertyError> {
    let min_scan_length = p.get_u64("minscanlength", 1)?;
    let max_scan_length = p.get_u64("maxscanlength", 1000)?;
    if min_scan_length > max_scan_length {
        return Err(p.invalid(
            "minscanlength",
            format!("is larger than maxscanlength ({max_scan_length})"),
        ));
    }
    let scan_length_distribution =
        match p.get_choice("scanlengthdistribution", "uniform", &["uniform", "zipfian"])? {
            "zipfian" => ScanLengthDistribution::Zipfian,
            _ => ScanLengthDistribution::Uniform,
        };
    Ok((min_scan_length, max_scan_length, scan_length_distribution))
}

/// The exponential request distribution's shape: `(percentile, frac)`.
fn exponential(p: &Properties) -> Result<(f64, f64), PropertyError> {
    let exponential_percentile = p.get_f64("exponential.percentile", 95.0)?;
    if !(exponential_percentile > 0.0 && exponential_percentile < 100.0) {
        return Err(p.invalid("exponential.percentile", "must be above 0 and below 100"));
    }
    let exponential_frac = p.get_f64("exponential.frac", 0.8571428571)?;
    if exponential_frac <= 0.0 {
        return Err(p.invalid("exponential.frac", "must be above 0"));
    }
    Ok((exponential_percentile, exponential_frac))
}

impl CoreConfig {
    pub fn from_properties(p: &Properties) -> Result<CoreConfig, PropertyError> {
        check_workload(p)?;
        let (field_count, field_length, min_field_length, field_length_distribution) = fields(p)?;

        let (record_count, operation_count, insert_start, insert_count) = inserts(p)?;
        let zero_padding = p.get_u64("zeropadding", 1)?;
        let insertorder = p.get_str("insertorder", "hashed");

        let proportions = proportions(p)?;

        let data_integrity = p.get_bool("dataintegrity", false)?;
        if data_integrity && field_length_distribution != FieldLengthDistribution::Constant {
            return Err(p.invalid(
                "dataintegrity",
                "requires fieldlengthdistribution=constant (values are derived from key and field at a fixed length)",
            ));
        }
        let request_distribution = request_distribution(p)?;
        let (min_scan_length, max_scan_length, scan_length_distribution) = scans(p)?;
        let (exponential_percentile, exponential_frac) = exponential(p)?;
        let retry_limit = p.get_u64("core_workload_insertion_retry_limit", 0)?;
        let retry_interval = p.get_u64("core_workload_insertion_retry_interval", 3)?;

        Ok(CoreConfig {
            table: p.get_str("table", "usertable").to_string(),
            field_count: field_count as usize,
            field_prefix: p.get_str("fieldnameprefix", "field").to_string(),
            field_length,
            min_field_length,
            field_length_distribution,
            record_count,
            operation_count,
            insert_start,
            insert_count,
            zero_padding: zero_padding.min(64) as usize,
            ordered_inserts: insertorder != "hashed",
            proportions,
            read_all_fields: p.get_bool("readallfields", true)?,
            write_all_fields: p.get_bool("writeallfields", false)?,
            data_integrity,
            request_distribution,
            min_scan_length,
            max_scan_length,
            scan_length_distribution,
            hotspot_data_fraction: fraction(p, "hotspotdatafraction", 0.2)?,
            hotspot_opn_fraction: fraction(p, "hotspotopnfraction", 0.8)?,
            exponential_percentile,
            exponential_frac,
            insertion_retry_limit: retry_limit.min(u32::MAX as u64) as u32,
            insertion_retry_interval: std::time::Duration::from_secs(retry_interval),
        })
    }
}
