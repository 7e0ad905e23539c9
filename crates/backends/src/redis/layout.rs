//! How records sit in Redis: the two layouts, YCSB's scan index and the
//! scripts of `redis.checked`.
//!
//! Two layouts, chosen with `redis.mode` (or `redis.command_group`, its
//! name in the vendor YCSB builds that published Redis and Tair figures):
//!
//! - `hash` (default) is YCSB's Redis binding: each record is a hash at the
//!   record's key (no table prefix) with one hash field per field, and every
//!   inserted key is also a member of the sorted set `_indices`, scored by
//!   Java's `String.hashCode()` of the key. A scan is YCSB's:
//!   `ZRANGEBYSCORE _indices hash(start) +inf LIMIT 0 count`, then the
//!   fields of each key found. So scans return keys in *hash order* from
//!   the start key's hash, not in key order, exactly as with YCSB; data
//!   loaded by YCSB runs here and the other way round.
//! - `string` stores each record as one plain string (`SET`/`GET`), the
//!   layout the Redis and Tair whitepapers benchmark. It holds exactly one
//!   field, so it requires `fieldcount=1` (refused otherwise, rather than
//!   silently dropping fields). Scans are `NOT_IMPLEMENTED`.

/// The sorted set of YCSB's Redis binding that indexes keys for scans.
pub const INDEX_KEY: &str = "_indices";

/// Update of existing hash fields; 0 when the record does not exist.
pub const UPDATE_SCRIPT: &str = "if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end\n\
redis.call('HSET', KEYS[1], unpack(ARGV))\n\
return 1\n";
/// SHA-1 of [`UPDATE_SCRIPT`], as `SCRIPT LOAD` answers (checked by the
/// integration tests against a real server).
pub const UPDATE_SHA: &str = "1e6b37db6bf61686adbd4a92f3ef6f32cf43c1d8";

/// Insert (replace) a record and index it: ARGV[1] is the score, then
/// field/value pairs.
pub const INSERT_SCRIPT: &str = "redis.call('DEL', KEYS[1])\n\
redis.call('HSET', KEYS[1], unpack(ARGV, 2))\n\
redis.call('ZADD', KEYS[2], ARGV[1], KEYS[1])\n\
return 1\n";
pub const INSERT_SHA: &str = "cd5d6514af620f6ef72a3303ce55ef6daddbcc6c";

/// Java's `String.hashCode()`, which YCSB's binding uses as the score of a
/// key in `_indices`: over UTF-16 code units, wrapping.
pub fn java_hash(key: &str) -> i32 {
    if key.is_ascii() {
        key.bytes()
            .fold(0i32, |h, b| h.wrapping_mul(31).wrapping_add(i32::from(b)))
    } else {
        key.encode_utf16()
            .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
    }
}
