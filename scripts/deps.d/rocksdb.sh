# RocksDB (cargo feature `rocksdb`, off by default): librocksdb-sys runs
# bindgen, which loads libclang at build time and needs clang's own headers
# (both come with libclang-dev). The C++ itself builds with g++.
need_pkg libclang-dev
