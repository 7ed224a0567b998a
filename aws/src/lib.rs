//! cdkd-aws: adapters over the AWS SDK (being written).
