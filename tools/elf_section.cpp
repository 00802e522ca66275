#include "elf_section.h"

#include <elf.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace weft::tools {

namespace {

bool read_exactly(int fd, void* buffer, std::size_t size, std::uint64_t offset) {
  auto* bytes = static_cast<char*>(buffer);
  while (size > 0) {
    const ssize_t got = ::pread(fd, bytes, size, static_cast<off_t>(offset));
    if (got <= 0) return false;
    bytes += got;
    size -= static_cast<std::size_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
  return true;
}

std::optional<Elf64_Ehdr> read_header(int fd) {
  Elf64_Ehdr header;
  if (!read_exactly(fd, &header, sizeof header, 0)) return std::nullopt;
  if (header.e_ident[EI_MAG0] != ELFMAG0 || header.e_ident[EI_MAG1] != ELFMAG1 ||
      header.e_ident[EI_MAG2] != ELFMAG2 || header.e_ident[EI_MAG3] != ELFMAG3 ||
      header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB) {
    return std::nullopt;
  }
  return header;
}

}  // namespace

bool is_elf64(int fd) {
  return read_header(fd).has_value();
}

std::optional<FileRange> find_elf_section(int fd, std::string_view name) {
  const std::optional<Elf64_Ehdr> header = read_header(fd);
  if (!header || header->e_shentsize != sizeof(Elf64_Shdr) || header->e_shnum == 0 ||
      header->e_shstrndx >= header->e_shnum) {
    return std::nullopt;
  }
  std::vector<Elf64_Shdr> sections(header->e_shnum);
  if (!read_exactly(fd, sections.data(), sections.size() * sizeof(Elf64_Shdr), header->e_shoff)) {
    return std::nullopt;
  }
  const Elf64_Shdr& names = sections[header->e_shstrndx];
  std::string table(names.sh_size, '\0');
  if (!read_exactly(fd, table.data(), table.size(), names.sh_offset)) return std::nullopt;
  for (const Elf64_Shdr& section : sections) {
    if (section.sh_name >= table.size()) continue;
    if (std::string_view(table.c_str() + section.sh_name) == name) {
      return FileRange{section.sh_offset, section.sh_size};
    }
  }
  return std::nullopt;
}

}  // namespace weft::tools
