/// Decoding a profile allocates and frees millions of small strings and
/// vectors; mimalloc handles that churn far better than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    xmem::cli::main()
}
