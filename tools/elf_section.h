// Finds a named section of an ELF file: weftcc marks the programs it links with section
// .weft_program (so that weftrun can refuse others before running them) and embeds the rank image
// in section .weft_image.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace weft::tools {

inline constexpr std::string_view kProgramMarkerSection = ".weft_program";
inline constexpr std::string_view kImageSection = ".weft_image";

struct FileRange {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

// True when the file open on `fd` starts like a 64-bit little-endian ELF file.
bool is_elf64(int fd);

// The bytes of section `name` in the ELF64 file open on `fd`; nullopt when the file is not ELF64,
// has no such section or its headers are truncated.
std::optional<FileRange> find_elf_section(int fd, std::string_view name);

}  // namespace weft::tools
