/* PLACEHOLDER: BPF-LSM programs (fs, exec, proc, mount, unix) go here. */
