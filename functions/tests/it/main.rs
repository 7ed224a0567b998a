//! The one integration-test binary of cdkd-functions.

mod consistency;
mod inputs;
