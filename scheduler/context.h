// The machine-level context switch: Boost.Context's fcontext, the fastest switch it offers (a
// few saved registers and a stack swap, no signal mask).
#pragma once

#include <boost/context/detail/fcontext.hpp>

#if defined(__GNUC__) && !defined(__clang__)
// The switch is called through the GOT, not the PLT: one jump fewer a switch (a yield's switch
// goes through switch_context, a tail call, then here). GCC only (clang has no such attribute;
// -fno-plt would do it for the whole library).
namespace boost::context::detail {
extern "C" [[gnu::noplt]] transfer_t jump_fcontext(fcontext_t const to, void* vp);
}  // namespace boost::context::detail
#endif

namespace weft::detail {

using boost::context::detail::fcontext_t;
using boost::context::detail::jump_fcontext;
using boost::context::detail::make_fcontext;
using boost::context::detail::transfer_t;

}  // namespace weft::detail
