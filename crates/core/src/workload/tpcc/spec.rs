//! What TPC-C's specification fixes: the rows of a warehouse, the five
//! transactions and their keying and think times, the terminals per
//! warehouse, and the most tpmC a warehouse can make.

/// Rows of a warehouse's districts, customers and orders, and of the
/// items (clause 4.3.3.1).
pub const DISTRICTS: u64 = 10;
pub const CUSTOMERS: u64 = 3_000;
pub const ORDERS: u64 = 3_000;
/// The first order of a district's initial ones still waiting for
/// delivery (its new orders).
pub const NEW_ORDERS_FROM: u64 = 2_101;
pub const ITEMS: u64 = 100_000;
pub const STOCK: u64 = 100_000;

/// The most New-Orders per minute a warehouse's ten terminals can make
/// with the spec's keying and think times (clause 5.4.2's 12.86 tpmC).
pub const MAX_TPMC_PER_WAREHOUSE: f64 = 12.86;

/// Seconds a run lasts where `maxexecutiontime` does not say.
pub const RUN_SECONDS: f64 = 60.0;

/// The label a TPC-C run keeps its warehouses in.
pub const WAREHOUSES_LABEL: &str = "tpcc_warehouses";

/// The five transactions, in the order of `tpcc.mix`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Txn {
    NewOrder = 0,
    Payment = 1,
    OrderStatus = 2,
    Delivery = 3,
    StockLevel = 4,
}

impl Txn {
    pub const ALL: [Txn; 5] = [
        Txn::NewOrder,
        Txn::Payment,
        Txn::OrderStatus,
        Txn::Delivery,
        Txn::StockLevel,
    ];

    /// Its operation's name, as go-tpc names it.
    pub fn name(self) -> &'static str {
        match self {
            Txn::NewOrder => "NEW_ORDER",
            Txn::Payment => "PAYMENT",
            Txn::OrderStatus => "ORDER_STATUS",
            Txn::Delivery => "DELIVERY",
            Txn::StockLevel => "STOCK_LEVEL",
        }
    }

    /// Its keying time, in seconds (clause 5.2.5.7).
    pub fn keying(self) -> f64 {
        match self {
            Txn::NewOrder => 18.0,
            Txn::Payment => 3.0,
            Txn::OrderStatus | Txn::Delivery | Txn::StockLevel => 2.0,
        }
    }

    /// The mean of its think time, in seconds (clause 5.2.5.7).
    pub fn think(self) -> f64 {
        match self {
            Txn::NewOrder | Txn::Payment => 12.0,
            Txn::OrderStatus => 10.0,
            Txn::Delivery | Txn::StockLevel => 5.0,
        }
    }
}

/// The spec's terminals per warehouse (clause 4.2.2).
pub const TERMINALS_PER_WAREHOUSE: u64 = 10;
