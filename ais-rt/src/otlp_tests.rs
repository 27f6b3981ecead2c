//! The endpoint a base URL names, and a sink refusing what is no OTLP/HTTP URL.

use super::*;

#[test]
fn a_base_url_gets_the_traces_path() {
    assert_eq!(
        traces_endpoint("http://127.0.0.1:4318"),
        "http://127.0.0.1:4318/v1/traces"
    );
    assert_eq!(
        traces_endpoint("http://127.0.0.1:4318/"),
        "http://127.0.0.1:4318/v1/traces"
    );
    assert_eq!(
        traces_endpoint("https://c.example/otlp/v1/traces"),
        "https://c.example/otlp/v1/traces"
    );
}

#[test]
fn a_url_that_is_not_http_is_refused_naming_it() {
    let Err(e) = OtlpSink::new("grpc://127.0.0.1:4317", OtlpOptions::default()) else {
        panic!("a gRPC URL is not an OTLP/HTTP collector");
    };
    assert!(
        e.contains("`grpc://127.0.0.1:4317` is not an http(s) URL"),
        "{e}"
    );
}
