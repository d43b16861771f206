fn main() -> std::process::ExitCode {
    xmem::cli::main()
}
