//! The one integration-test binary of cdkd-deleters: SDK clients against aws-smithy-mocks (no network).

mod cloudcontrol_mock;
mod cloudcontrol_read_mock;
mod custom_resource_mock;
mod live_attributes_mock;
